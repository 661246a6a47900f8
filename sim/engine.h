/* engine.h */
#ifndef CCA_ENGINE_H
#define CCA_ENGINE_H
#endif

/* allocator.h */
#ifndef CCA_ALLOCATOR_H
#define CCA_ALLOCATOR_H
#endif

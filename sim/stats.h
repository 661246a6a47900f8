/* stats.h */
#ifndef CCA_STATS_H
#define CCA_STATS_H
#endif

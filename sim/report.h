/* report.h */
#ifndef CCA_REPORT_H
#define CCA_REPORT_H
#endif

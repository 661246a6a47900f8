/* device.h */
#ifndef CCA_DEVICE_H
#define CCA_DEVICE_H
#endif

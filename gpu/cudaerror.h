/* cudaerror.h - the error domain of the CUDA runtime and driver calls
 * (defined in cudadevice.c), shared by cudadevice.h and cudautil.h so that
 * neither includes the other.
 */
#ifndef CCA_CUDAERROR_H
#define CCA_CUDAERROR_H

#include <glib.h>

G_BEGIN_DECLS

/* Errors of the CUDA runtime or driver, and the absence of a device. */
#define CCA_CUDA_ERROR (cca_cudadevice_error_quark())
GQuark cca_cudadevice_error_quark(void);

typedef enum {
	CCA_CUDA_ERROR_NO_DEVICE,   /* no usable GPU (no driver, no device, bad ordinal) */
	CCA_CUDA_ERROR_FAILED,	    /* a runtime or driver call failed */
	CCA_CUDA_ERROR_UNSUPPORTED, /* the replay needs what a GPU cannot do */
} CcaCudaError;

G_END_DECLS

#endif

/* The C API of compiled Tuner models: load an artifact written by `tuner compile`, set the
 * inputs, run, read the outputs. Every function returning int gives 0 on success and -1 on
 * failure, with the reason in tuner_last_error() (per thread): a NULL pointer argument or an
 * index out of range among them. Link with libtuner_runtime.
 *
 * A TunerModel serves one thread at a time: set_input, run or get_output called while another
 * thread's call on the same model is in progress fails (-1) rather than racing. Models are
 * independent (each has its own threads and memory): load one per thread to run in parallel.
 * An output pointer stays valid until the next run or free of its model. */
#ifndef TUNER_RUNTIME_H_
#define TUNER_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TunerModel TunerModel;

/** Loads the artifact at path; num_threads <= 0 uses TUNER_NUM_THREADS or every core. */
int tuner_model_load(const char* path, int num_threads, TunerModel** out);
/** Frees a model (NULL is fine). */
void tuner_model_free(TunerModel* model);
/** The message of this thread's last failure. */
const char* tuner_last_error(void);

/** The number of inputs (outputs); -1 for a NULL model. */
int tuner_model_num_inputs(const TunerModel* model);
int tuner_model_num_outputs(const TunerModel* model);
/** Name, dtype ("float32", ...), rank and shape of input i; the strings live with the model. */
int tuner_model_input_info(const TunerModel* model, int i, const char** name, const char** dtype,
                           int* ndim, const int64_t** shape);
/** The same for output i. */
int tuner_model_output_info(const TunerModel* model, int i, const char** name,
                            const char** dtype, int* ndim, const int64_t** shape);
/** Copies input i from data (bytes must be the input's exact size); a failed call leaves input i
 * unset, so a run fails rather than use stale data. */
int tuner_model_set_input(TunerModel* model, int i, const void* data, size_t bytes);
/** Runs the model once; -1 naming the first input that tuner_model_set_input never set. */
int tuner_model_run(TunerModel* model);
/** Points *data at output i (valid until the next run or free) and its size in *bytes; -1
 * unless the last tuner_model_run succeeded. */
int tuner_model_get_output(const TunerModel* model, int i, const void** data, size_t* bytes);

#ifdef __cplusplus
}
#endif

#endif /* TUNER_RUNTIME_H_ */

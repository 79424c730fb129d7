#include <exception>
#include <memory>
#include <string>

#include "runtime/executor.h"
#include "runtime/tuner_runtime.h"

struct TunerModel {
  std::unique_ptr<tuner::runtime::Executor> exec;
};

namespace {

thread_local std::string g_last_error;

// Runs f, turning any exception into -1 and the thread's last error.
template <class F>
int guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    g_last_error = e.what();
  } catch (...) {
    g_last_error = "unknown error";
  }
  return -1;
}

int describe(const tuner::runtime::BufferDesc& d, const char** name, const char** dtype, int* ndim,
             const int64_t** shape) {
  if (name) *name = d.name.c_str();
  if (dtype) *dtype = d.dtype.c_str();
  if (ndim) *ndim = int(d.shape.size());
  if (shape) *shape = d.shape.data();
  return 0;
}

}  // namespace

extern "C" {

int tuner_model_load(const char* path, int num_threads, TunerModel** out) {
  return guarded([&] {
    auto m = std::make_unique<TunerModel>();
    m->exec = std::make_unique<tuner::runtime::Executor>(tuner::runtime::Artifact::load(path),
                                                         num_threads);
    *out = m.release();
  });
}

void tuner_model_free(TunerModel* model) { delete model; }

const char* tuner_last_error(void) { return g_last_error.c_str(); }

int tuner_model_num_inputs(const TunerModel* model) { return int(model->exec->num_inputs()); }
int tuner_model_num_outputs(const TunerModel* model) { return int(model->exec->num_outputs()); }

int tuner_model_input_info(const TunerModel* model, int i, const char** name, const char** dtype,
                           int* ndim, const int64_t** shape) {
  return guarded([&] { describe(model->exec->input_desc(size_t(i)), name, dtype, ndim, shape); });
}

int tuner_model_output_info(const TunerModel* model, int i, const char** name,
                            const char** dtype, int* ndim, const int64_t** shape) {
  return guarded([&] { describe(model->exec->output_desc(size_t(i)), name, dtype, ndim, shape); });
}

int tuner_model_set_input(TunerModel* model, int i, const void* data, size_t bytes) {
  return guarded([&] { model->exec->set_input(size_t(i), data, bytes); });
}

int tuner_model_run(TunerModel* model) {
  return guarded([&] { model->exec->run(); });
}

int tuner_model_get_output(const TunerModel* model, int i, const void** data, size_t* bytes) {
  return guarded([&] {
    const auto& d = model->exec->output_desc(size_t(i));
    *data = model->exec->output(size_t(i));
    *bytes = size_t(d.bytes);
  });
}

}  // extern "C"

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "runtime/tuner_runtime.h"
#include "support/error.h"

struct TunerModel {
  std::unique_ptr<tuner::runtime::Executor> exec;
  // Per input, whether tuner_model_set_input gave it: unset inputs hold zeros (never set) or
  // a refused set's leftovers (its last set failed), which a caller never meant.
  enum class Input { Never, Set, Refused };
  std::vector<Input> inputs;
  // Whether the last run completed: before one, the outputs hold zeros, not results.
  bool ran = false;
  // Set while a call that reads or writes the model's buffers is in progress: a second
  // thread's call fails instead of racing on them (or entering the thread pool twice).
  mutable std::atomic<bool> busy{false};
};

namespace {

thread_local std::string g_last_error;

// Runs f, turning any exception into -1 and the thread's last error. The API's own failures
// are UserErrors, whose messages (quoting the model's names) have their controls escaped.
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

// A NULL argument the API needs is a failure, not a crash.
void need(const void* p, const char* what) {
  if (!p) throw tuner::UserError(std::string(what) + " is NULL");
}

// Index i of `count` inputs or outputs, checked.
size_t index(int i, size_t count, const char* what) {
  if (i < 0 || size_t(i) >= count)
    throw tuner::UserError("the model has " + std::to_string(count) + " " + what + "s; " + what +
                            " " + std::to_string(i) + " does not exist");
  return size_t(i);
}

// Holds the model for one call; throws when another thread's call holds it.
class Exclusive {
 public:
  explicit Exclusive(const TunerModel* m) : m_(m) {
    if (m_->busy.exchange(true, std::memory_order_acquire))
      throw tuner::UserError(
          "the model is in use by another thread's call (a TunerModel serves one thread at a "
          "time; load one per thread to run in parallel)");
  }
  ~Exclusive() { m_->busy.store(false, std::memory_order_release); }
  Exclusive(const Exclusive&) = delete;
  Exclusive& operator=(const Exclusive&) = delete;

 private:
  const TunerModel* m_;
};

using tuner::runtime::Executor;

// The number of inputs or outputs, or -1 (and the error) for a NULL model.
int count(const TunerModel* model, size_t (Executor::*n)() const) {
  if (!model) {
    g_last_error = "the model is NULL";
    return -1;
  }
  return int((*model->exec.*n)());
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
    need(path, "the path");
    need(out, "the output pointer");
    auto m = std::make_unique<TunerModel>();
    m->exec = std::make_unique<tuner::runtime::Executor>(tuner::runtime::Artifact::load(path),
                                                         num_threads);
    m->inputs.assign(m->exec->num_inputs(), TunerModel::Input::Never);
    *out = m.release();
  });
}

void tuner_model_free(TunerModel* model) { delete model; }

const char* tuner_last_error(void) { return g_last_error.c_str(); }

int tuner_model_num_inputs(const TunerModel* model) { return count(model, &Executor::num_inputs); }
int tuner_model_num_outputs(const TunerModel* model) { return count(model, &Executor::num_outputs); }

int tuner_model_input_info(const TunerModel* model, int i, const char** name, const char** dtype,
                           int* ndim, const int64_t** shape) {
  return guarded([&] {
    need(model, "the model");
    describe(model->exec->input_desc(index(i, model->exec->num_inputs(), "input")), name, dtype,
             ndim, shape);
  });
}

int tuner_model_output_info(const TunerModel* model, int i, const char** name,
                            const char** dtype, int* ndim, const int64_t** shape) {
  return guarded([&] {
    need(model, "the model");
    describe(model->exec->output_desc(index(i, model->exec->num_outputs(), "output")), name,
             dtype, ndim, shape);
  });
}

int tuner_model_set_input(TunerModel* model, int i, const void* data, size_t bytes) {
  return guarded([&] {
    need(model, "the model");
    Exclusive hold(model);
    size_t k = index(i, model->exec->num_inputs(), "input");
    need(data, "the input data");
    // A refused set (a wrong size, indices checked after the copy) leaves it unset: a caller
    // that missed the -1 must not run on stale data.
    model->inputs[k] = TunerModel::Input::Refused;
    model->exec->set_input(k, data, bytes);
    model->inputs[k] = TunerModel::Input::Set;
  });
}

int tuner_model_run(TunerModel* model) {
  return guarded([&] {
    need(model, "the model");
    Exclusive hold(model);
    model->ran = false;  // a failed or refused run leaves no results either
    for (size_t k = 0; k < model->inputs.size(); ++k)
      if (model->inputs[k] != TunerModel::Input::Set)
        throw tuner::UserError("input '" + model->exec->input_desc(k).name + "' (input " +
                               std::to_string(k) + ") " +
                               (model->inputs[k] == TunerModel::Input::Refused ? "is unset: its last tuner_model_set_input failed"
                                                        : "was never set: call tuner_model_set_input first"));
    model->exec->run();
    model->ran = true;
  });
}

int tuner_model_get_output(const TunerModel* model, int i, const void** data, size_t* bytes) {
  return guarded([&] {
    need(model, "the model");
    Exclusive hold(model);
    size_t k = index(i, model->exec->num_outputs(), "output");
    need(data, "the data pointer");
    need(bytes, "the size pointer");
    if (!model->ran) throw tuner::UserError("no output yet: call tuner_model_run first");
    *data = model->exec->output(k);
    *bytes = size_t(model->exec->output_desc(k).bytes);
  });
}

}  // extern "C"

#include "onnx/node_harness.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "codegen/target.h"
#include "compile/compile_model.h"
#include "graph/converters.h"
#include "graph/passes.h"
#include "graph/onnx_import.h"
#include "graph/tensor_proto.h"
#include "runtime/executor.h"
#include "support/error.h"

namespace tuner::onnx_tests {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kMinOpset = 11, kMaxOpset = 18;  // what graph::import_onnx reads

// One line, without the (long) directories in front of file names.
std::string one_line(std::string s, const std::vector<std::string>& dirs = {}) {
  for (const std::string& d : dirs)
    for (size_t p; !d.empty() && (p = s.find(d + "/")) != std::string::npos;)
      s.erase(p, d.size() + 1);
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s.size() > 400 ? s.substr(0, 400) + "..." : s;
}

// output_0.pb, output_1.pb, ... of a data set, in index order.
std::vector<ops::HostTensor> load_outputs(const fs::path& dir) {
  std::vector<ops::HostTensor> out;
  for (size_t i = 0;; ++i) {
    fs::path p = dir / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) return out;
    out.push_back(graph::load_tensor_file(p.string()));
  }
}

onnx::TensorProto read_tensor_proto(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  onnx::TensorProto t;
  USER_CHECK(in && t.ParseFromIstream(&in)) << p.string() << ": not a TensorProto";
  return t;
}

// Reads the data set's inputs (input_i.pb for the i-th non-initializer graph input). Inputs a
// converter reads as constants (Reshape's shape, Slice's starts, Clip's bounds, ...) are bound
// to their values as initializers, as a static compiler needs; with that or an opset to read
// the model as, the model is rewritten to `rewritten_path`. Returns the path to import and
// the remaining inputs' data.
std::string prepare_model(const std::string& model_path, const fs::path& data_dir,
                          int64_t read_as_opset, const std::string& rewritten_path,
                          std::vector<ops::HostTensor>& inputs) {
  onnx::ModelProto m;
  {
    std::ifstream in(model_path, std::ios::binary);
    USER_CHECK(in && m.ParseFromIstream(&in)) << "cannot parse " << model_path;
  }
  std::set<std::string> initializers, constant_uses;
  for (const auto& t : m.graph().initializer()) initializers.insert(t.name());
  for (const auto& n : m.graph().node())
    if (const graph::Converter* c = graph::find_converter(n.op_type()))
      for (int i : c->constant_inputs)
        if (i < n.input_size()) constant_uses.insert(n.input(i));
  bool rewritten = false;
  if (read_as_opset)
    for (auto& o : *m.mutable_opset_import())
      if (o.domain().empty() || o.domain() == "ai.onnx") {
        o.set_version(read_as_opset);
        rewritten = true;
      }
  auto* graph_inputs = m.mutable_graph()->mutable_input();
  size_t data_index = 0;
  for (int k = 0; k < graph_inputs->size();) {
    std::string name = graph_inputs->Get(k).name();
    if (initializers.count(name)) {
      ++k;
      continue;
    }
    USER_CHECK(graph_inputs->Get(k).type().has_tensor_type())
        << "input '" << name << "' is not a tensor (sequence and optional types are not supported)";
    fs::path file = data_dir / ("input_" + std::to_string(data_index++) + ".pb");
    onnx::TensorProto t = read_tensor_proto(file);
    if (!constant_uses.count(name)) {
      inputs.push_back(graph::tensor_from_proto(t, "", file.string()));
      ++k;
      continue;
    }
    t.set_name(name);
    *m.mutable_graph()->add_initializer() = t;
    graph_inputs->DeleteSubrange(k, 1);
    rewritten = true;
  }
  if (!rewritten) return model_path;
  std::ofstream out(rewritten_path, std::ios::binary);
  INTERNAL_CHECK(out && m.SerializeToOstream(&out)) << "cannot write " << rewritten_path;
  return rewritten_path;
}

// Reads the model's opset and operator types without the frontend (whether a test applies
// must not depend on the code under test working); false with r's status and message set
// when the test does not apply.
bool applicable(const std::string& model_path, const NodeTestOptions& options,
                NodeTestResult& r) {
  std::ifstream in(model_path, std::ios::binary);
  onnx::ModelProto m;
  if (!in || !m.ParseFromIstream(&in)) {
    r.status = NodeTestStatus::Failed;
    r.message = "cannot parse model.onnx";
    return false;
  }
  std::set<std::string> ops, missing;
  for (const auto& n : m.graph().node()) {
    bool default_domain = n.domain().empty() || n.domain() == "ai.onnx";
    std::string op = default_domain ? n.op_type() : n.domain() + "." + n.op_type();
    ops.insert(op);
    if (!default_domain || !graph::find_converter(n.op_type())) missing.insert(op);
  }
  r.ops.assign(ops.begin(), ops.end());
  int64_t opset = -1;
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  if (options.lift_old_opsets) {
    bool same = opset >= 1 && opset < kMinOpset;
    for (const auto& op : ops) {
      auto* then = onnx::OpSchemaRegistry::Schema(op, int(opset));
      auto* now = onnx::OpSchemaRegistry::Schema(op, int(kMinOpset));
      same = same && then && now && then->since_version() == now->since_version();
    }
    if (!same) {
      r.status = NodeTestStatus::WrongOpset;
      r.message = "opset " + std::to_string(opset) + ", not liftable";
      return false;
    }
    opset = kMinOpset;
  }
  if (options.read_as_opset && opset >= 0) opset = options.read_as_opset;
  if (opset < kMinOpset || opset > kMaxOpset) {
    r.status = NodeTestStatus::WrongOpset;
    r.message = "opset " + std::to_string(opset);
    return false;
  }
  // Where ONNX Runtime and PyTorch compute otherwise than a test's data, Tuner follows them
  // (users' models come from PyTorch and are checked against ONNX Runtime).
  static const std::map<std::string, std::string> kAsOnnxRuntime = {
      {"test_resize_downsample_scales_linear_align_corners", "align_corners over the output length"},
      {"test_resize_downsample_scales_cubic_align_corners", "align_corners over the output length"}};
  if (auto it = kAsOnnxRuntime.find(r.name); it != kAsOnnxRuntime.end()) {
    r.status = NodeTestStatus::UnsupportedVariant;
    r.message = "as ONNX Runtime and PyTorch, not this test's data: " + it->second;
    return false;
  }
  if (!missing.empty()) {
    r.status = NodeTestStatus::MissingOperator;
    for (const auto& op : missing) r.message += (r.message.empty() ? "" : " ") + op;
    return false;
  }
  return true;
}

// The child's work: prepare, import, run, compare. Returns a status letter and a message.
std::pair<char, std::string> import_run_compare(const std::string& test_dir,
                                                const std::string& tmp_dir,
                                                const NodeTestRunner& runner,
                                                int64_t read_as_opset) {
  fs::path data_dir = fs::path(test_dir) / "test_data_set_0";
  std::string model = (fs::path(test_dir) / "model.onnx").string();
  std::vector<std::string> dirs = {test_dir, tmp_dir};
  std::vector<ops::HostTensor> inputs, expected;
  try {
    model = prepare_model(model, data_dir, read_as_opset, tmp_dir + "/model.onnx", inputs);
    expected = load_outputs(data_dir);
  } catch (const UserError& e) {
    return {'U', "test data: " + one_line(e.what(), dirs)};
  }
  graph::Graph g;
  try {
    g = graph::import_onnx(model);
  } catch (const UserError& e) {
    return {'U', one_line(e.what(), dirs)};
  }
  if (inputs.size() != g.inputs.size())
    return {'F', "the data set has " + std::to_string(inputs.size()) + " inputs, the graph " +
                     std::to_string(g.inputs.size())};
  std::vector<ops::HostTensor> actual;
  try {
    actual = runner(model, g, inputs);
  } catch (const UserError& e) {
    return {'F', "run: " + one_line(e.what(), dirs)};
  }
  if (actual.size() != expected.size())
    return {'F', "produced " + std::to_string(actual.size()) + " outputs, expected " +
                     std::to_string(expected.size())};
  for (size_t i = 0; i < expected.size(); ++i) {
    ops::CompareResult c = ops::compare(actual[i], expected[i], 1e-3, 1e-4);
    if (!c.ok)
      return {'F', "output " + std::to_string(i) + " (" + g.values[g.outputs[i]].name +
                       "): " + c.message};
  }
  return {'P', ""};
}

}  // namespace

int NodeTestSummary::count(NodeTestStatus s) const {
  return int(std::count_if(results.begin(), results.end(),
                           [&](const NodeTestResult& r) { return r.status == s; }));
}

std::string NodeTestSummary::headline() const {
  int passed = count(NodeTestStatus::Passed), failed = count(NodeTestStatus::Failed);
  int unsupported = count(NodeTestStatus::UnsupportedVariant);
  int opset = count(NodeTestStatus::WrongOpset), ops = count(NodeTestStatus::MissingOperator);
  std::ostringstream os;
  os << "ONNX node tests: " << passed << " passed of " << passed + failed + unsupported
     << " applicable (" << unsupported << " unsupported variants; " << opset + ops
     << " not applicable: " << opset << " opset, " << ops << " operators)";
  return os.str();
}

std::string NodeTestSummary::report() const {
  std::ostringstream os;
  os << headline() << "\n";
  // Per operator: passed / applicable, over the tests that use it.
  std::map<std::string, std::pair<int, int>> per_op;
  for (const NodeTestResult& r : results) {
    if (r.status == NodeTestStatus::WrongOpset || r.status == NodeTestStatus::MissingOperator)
      continue;
    for (const std::string& op : r.ops) {
      per_op[op].second++;
      if (r.status == NodeTestStatus::Passed) per_op[op].first++;
    }
  }
  os << "per operator (passed/applicable):";
  int col = 0;
  for (const auto& [op, n] : per_op) {
    os << (col++ % 6 ? "  " : "\n  ") << op << " " << n.first << "/" << n.second;
  }
  os << "\n";
  auto list = [&](NodeTestStatus s, const char* title) {
    if (!count(s)) return;
    os << title << " (" << count(s) << "):\n";
    for (const NodeTestResult& r : results)
      if (r.status == s) os << "  " << r.name << ": " << r.message << "\n";
  };
  std::vector<const NodeTestResult*> slow;
  for (const NodeTestResult& r : results)
    if (r.seconds > 5) slow.push_back(&r);
  if (!slow.empty()) {
    os << "slow (over 5 s):";
    for (const NodeTestResult* r : slow) os << " " << r->name << " (" << int(r->seconds) << " s)";
    os << "\n";
  }
  list(NodeTestStatus::UnsupportedVariant, "unsupported variants");
  list(NodeTestStatus::Failed, "FAILURES");
  return os.str();
}

std::optional<std::string> find_node_test_dir() {
  std::error_code ec;
  if (const char* env = std::getenv("TUNER_ONNX_NODE_TESTS"); env && *env) {
    if (fs::is_directory(env, ec)) return std::string(env);
    return std::nullopt;
  }
  FILE* p = popen("python3 -c 'import onnx,os;print(os.path.dirname(onnx.__file__))' 2>/dev/null",
                  "r");
  if (!p) return std::nullopt;
  char buf[4096];
  std::string out;
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  if (pclose(p) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  fs::path dir = fs::path(out) / "backend" / "test" / "data" / "node";
  if (out.empty() || !fs::is_directory(dir, ec)) return std::nullopt;
  return dir.string();
}

NodeTestResult run_node_test(const std::string& test_dir, const NodeTestRunner& runner,
                             const NodeTestOptions& options) {
  NodeTestResult r;
  r.name = fs::path(test_dir).filename().string();
  if (!applicable((fs::path(test_dir) / "model.onnx").string(), options, r)) return r;
  int64_t read_as = options.lift_old_opsets ? kMinOpset : options.read_as_opset;

  auto t0 = std::chrono::steady_clock::now();
  char tmp[] = "/tmp/tuner-node-test-XXXXXX";
  INTERNAL_CHECK(mkdtemp(tmp)) << "mkdtemp failed";
  int fds[2];
  INTERNAL_CHECK(pipe(fds) == 0) << "pipe failed";
  std::fflush(nullptr);
  pid_t pid = fork();
  INTERNAL_CHECK(pid >= 0) << "fork failed";
  if (pid == 0) {
    close(fds[0]);
    alarm(unsigned(options.timeout_s));
    std::pair<char, std::string> res;
    try {
      res = import_run_compare(test_dir, tmp, runner, read_as);
    } catch (const InternalError& e) {
      res = {'F', std::string("internal error: ") + e.what()};
    } catch (const std::exception& e) {
      res = {'F', std::string("exception: ") + e.what()};
    }
    std::string line = res.first + one_line(res.second);
    for (size_t off = 0; off < line.size();) {
      ssize_t n = write(fds[1], line.data() + off, line.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string line;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    line.append(buf, size_t(n));
  }
  close(fds[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (WIFSIGNALED(st)) {
    int sig = WTERMSIG(st);
    r.status = NodeTestStatus::Failed;
    r.message = sig == SIGALRM ? "timed out after " + std::to_string(options.timeout_s) + " s"
                               : std::string("crashed: ") + strsignal(sig);
    return r;
  }
  if (line.empty()) {
    r.message = "the child exited without a result";
    return r;
  }
  r.status = line[0] == 'P'   ? NodeTestStatus::Passed
             : line[0] == 'U' ? NodeTestStatus::UnsupportedVariant
                              : NodeTestStatus::Failed;
  r.message = line.substr(1);
  return r;
}

NodeTestSummary run_node_tests(const std::string& node_dir, const NodeTestRunner& runner,
                               const NodeTestOptions& options) {
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(node_dir)) {
    std::string name = e.path().filename().string();
    if (e.is_directory() && fs::exists(e.path() / "model.onnx") &&
        name.find(options.filter) != std::string::npos)
      dirs.push_back(e.path().string());
  }
  std::sort(dirs.begin(), dirs.end());
  NodeTestSummary s;
  for (const std::string& d : dirs) {
    s.results.push_back(run_node_test(d, runner, options));
    if (options.progress) options.progress(s.results.back());
  }
  return s;
}

std::vector<ops::HostTensor> run_compiled(const graph::Graph& imported,
                                          const std::vector<ops::HostTensor>& inputs) {
  codegen::Target target = codegen::Target::host();
  return run_compiled(imported, inputs, target, compile::pass_options_for(target));
}

std::vector<ops::HostTensor> run_compiled(const graph::Graph& imported, const std::vector<ops::HostTensor>& inputs,
                                          const codegen::Target& target, const graph::PassOptions& passes) {
  graph::Graph g = imported;
  graph::run_passes(g, passes);
  compile::ModelCompileOptions co;
  co.target = target;
  runtime::Executor ex(compile::compile_model(g, co), 2);
  for (size_t i = 0; i < inputs.size(); ++i) ex.set_input(i, inputs[i].raw(), inputs[i].bytes());
  ex.run();
  std::vector<ops::HostTensor> out;
  for (size_t i = 0; i < ex.num_outputs(); ++i) {
    const runtime::BufferDesc& d = ex.output_desc(i);
    ops::HostTensor t(d.shape, te::DataType::parse(d.dtype));
    std::memcpy(t.raw(), ex.output(i), t.bytes());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace tuner::onnx_tests

// flashproof-ggml-query: asks a runtime's own ggml backends whether they support FLASH_ATTN_EXT for
// given shapes and K/V types, without weights and without allocating a tensor.
//
// It runs in the runtime's world, not flashproof's: flashproof starts it the way it starts the runtime
// (for Debian sid's build: sid's loader with the runtime's --library-path), so that dlopen finds the
// very libggml the runtime links and ggml_backend_load_all() finds the same backends beside the same
// executable (the loader). It links nothing of ggml at build time: the few declarations below are
// ggml's C ABI, checked at run time where the library can say (type names by ggml_type_name, the
// node's op by ggml_op_desc, block sizes by ggml_blck_size). Nothing of flashproof is linked either.
//
// usage: flashproof-ggml-query --ggml LIBGGML --queries FILE --answers FILE [--backend-dir DIR]
//   LIBGGML   the runtime's libggml (path or soname); libggml-base comes with it as its dependency
//   DIR       load the backends from this folder (ggml_backend_load_all_from_path) instead of where
//             ggml looks by itself (ggml_backend_load_all: beside the executable, the current folder)
// Query lines (whitespace-separated; '#' starts a comment):
//   ID HEAD_K HEAD_V N_HEAD N_HEAD_KV N_KV N_TOKENS N_STREAM K_TYPE V_TYPE V_IS_K_VIEW SCALE MAX_BIAS SOFTCAP
// Answer lines (tab-separated), written as they are known:
//   ggml VERSION COMMIT
//   device INDEX NAME BACKEND TYPE DESCRIPTION
//   answer ID DEVICE_INDEX yes|no
//   cache ID DEVICE_INDEX yes|no  (whether the device takes the K and V cache tensors themselves: a
//                                  device that does not cannot hold the cache; llama.cpp's scheduler
//                                  aborts at start on such a pre-allocated tensor)
//   refused ID WHY        (the shape cannot be built as the runtime builds it; no device asked)
//   error ID WHY          (a malformed query line)
//   done QUERIES MICROSECONDS
//   fatal WHY             (the library or a symbol could not be loaded; exit status 2)
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

// ---- ggml's C ABI (ggml/include/ggml.h, ggml-backend.h; stable since ggml 0.9, checked on 0.27.0) ----
struct ggml_context;
struct ggml_tensor;
using ggml_backend_dev_t = void*;
using ggml_backend_reg_t = void*;

struct ggml_init_params {
  size_t mem_size;
  void* mem_buffer;
  bool no_alloc;
};

constexpr int kGgmlTypeF32 = 0;       // enum ggml_type: GGML_TYPE_F32
constexpr int kGgmlTypeF16 = 1;       // GGML_TYPE_F16 (the mask's type)
constexpr int kGgmlPrecF32 = 10;      // enum ggml_prec: GGML_PREC_F32 (llama-graph sets it on the node)
// The K/V cache types llama.cpp accepts, at their enum ggml_type values (ggml adds types only at the
// end, so these do not move); each is checked against the library's own ggml_type_name before use.
// The table is not read from the library: ggml_type_name does not bound-check its argument (0.27.0).
const std::pair<const char*, int> kCacheTypes[] = {{"f32", 0},  {"f16", 1},  {"q4_0", 2},   {"q4_1", 3}, {"q5_0", 6},
                                                   {"q5_1", 7}, {"q8_0", 8}, {"iq4_nl", 20}, {"bf16", 30}};

struct Ggml {
  void* lib = nullptr;
  const char* (*version)() = nullptr;
  const char* (*commit)() = nullptr;
  ggml_context* (*init)(ggml_init_params) = nullptr;
  void (*free)(ggml_context*) = nullptr;
  size_t (*tensor_overhead)() = nullptr;
  ggml_tensor* (*new_tensor_4d)(ggml_context*, int, int64_t, int64_t, int64_t, int64_t) = nullptr;
  ggml_tensor* (*view_4d)(ggml_context*, ggml_tensor*, int64_t, int64_t, int64_t, int64_t, size_t, size_t, size_t,
                          size_t) = nullptr;
  ggml_tensor* (*permute)(ggml_context*, ggml_tensor*, int, int, int, int) = nullptr;
  ggml_tensor* (*flash_attn_ext)(ggml_context*, ggml_tensor*, ggml_tensor*, ggml_tensor*, ggml_tensor*, float, float,
                                 float) = nullptr;
  void (*flash_attn_ext_set_prec)(ggml_tensor*, int) = nullptr;
  const char* (*type_name)(int) = nullptr;
  int64_t (*blck_size)(int) = nullptr;
  size_t (*row_size)(int, int64_t) = nullptr;
  const char* (*op_desc)(const ggml_tensor*) = nullptr;
  void (*log_set)(void (*)(int, const char*, void*), void*) = nullptr;  // optional
  void (*backend_load_all)() = nullptr;
  void (*backend_load_all_from_path)(const char*) = nullptr;
  size_t (*dev_count)() = nullptr;
  ggml_backend_dev_t (*dev_get)(size_t) = nullptr;
  const char* (*dev_name)(ggml_backend_dev_t) = nullptr;
  const char* (*dev_description)(ggml_backend_dev_t) = nullptr;
  int (*dev_type)(ggml_backend_dev_t) = nullptr;
  ggml_backend_reg_t (*dev_backend_reg)(ggml_backend_dev_t) = nullptr;
  const char* (*reg_name)(ggml_backend_reg_t) = nullptr;
  bool (*dev_supports_op)(ggml_backend_dev_t, const ggml_tensor*) = nullptr;
};

template <typename F>
bool bind(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) missing += std::string(missing.empty() ? "" : ", ") + name;
  return fn != nullptr;
}

std::string load_ggml(const std::string& path, Ggml& g) {
  g.lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!g.lib) {
    const char* why = dlerror();
    return "cannot load " + path + ": " + (why ? why : "unknown dlopen error");
  }
  std::string missing;
  bind(g.lib, "ggml_version", g.version, missing);
  bind(g.lib, "ggml_commit", g.commit, missing);
  bind(g.lib, "ggml_init", g.init, missing);
  bind(g.lib, "ggml_free", g.free, missing);
  bind(g.lib, "ggml_tensor_overhead", g.tensor_overhead, missing);
  bind(g.lib, "ggml_new_tensor_4d", g.new_tensor_4d, missing);
  bind(g.lib, "ggml_view_4d", g.view_4d, missing);
  bind(g.lib, "ggml_permute", g.permute, missing);
  bind(g.lib, "ggml_flash_attn_ext", g.flash_attn_ext, missing);
  bind(g.lib, "ggml_flash_attn_ext_set_prec", g.flash_attn_ext_set_prec, missing);
  bind(g.lib, "ggml_type_name", g.type_name, missing);
  bind(g.lib, "ggml_blck_size", g.blck_size, missing);
  bind(g.lib, "ggml_row_size", g.row_size, missing);
  bind(g.lib, "ggml_op_desc", g.op_desc, missing);
  bind(g.lib, "ggml_backend_load_all", g.backend_load_all, missing);
  bind(g.lib, "ggml_backend_load_all_from_path", g.backend_load_all_from_path, missing);
  bind(g.lib, "ggml_backend_dev_count", g.dev_count, missing);
  bind(g.lib, "ggml_backend_dev_get", g.dev_get, missing);
  bind(g.lib, "ggml_backend_dev_name", g.dev_name, missing);
  bind(g.lib, "ggml_backend_dev_description", g.dev_description, missing);
  bind(g.lib, "ggml_backend_dev_type", g.dev_type, missing);
  bind(g.lib, "ggml_backend_dev_backend_reg", g.dev_backend_reg, missing);
  bind(g.lib, "ggml_backend_reg_name", g.reg_name, missing);
  bind(g.lib, "ggml_backend_dev_supports_op", g.dev_supports_op, missing);
  if (!missing.empty()) return path + " lacks " + missing + ": not a ggml library this helper knows";
  g.log_set = reinterpret_cast<decltype(g.log_set)>(dlsym(g.lib, "ggml_log_set"));
  return "";
}

// enum ggml_backend_dev_type as of ggml 0.27 (CPU, GPU, IGPU, ACCEL, META).
const char* device_type_name(int t) {
  static const char* const names[] = {"cpu", "gpu", "igpu", "accel", "meta"};
  return t >= 0 && t < 5 ? names[t] : "unknown";
}

std::string clean(const char* s) {
  std::string out = s ? s : "";
  for (char& c : out)
    if (c == '\t' || c == '\n' || c == '\r') c = ' ';
  return out;
}

struct Query {
  std::string id;
  int64_t head_k = 0, head_v = 0, n_head = 0, n_head_kv = 0, n_kv = 0, n_tokens = 0, n_stream = 1;
  std::string k_type, v_type;
  int v_is_k_view = 0;
  float scale = 1, max_bias = 0, softcap = 0;
};

bool parse_query(const std::string& line, Query& q, std::string& why) {
  std::istringstream in(line);
  if (!(in >> q.id >> q.head_k >> q.head_v >> q.n_head >> q.n_head_kv >> q.n_kv >> q.n_tokens >> q.n_stream >> q.k_type >>
        q.v_type >> q.v_is_k_view >> q.scale >> q.max_bias >> q.softcap)) {
    why = "expected ID HEAD_K HEAD_V N_HEAD N_HEAD_KV N_KV N_TOKENS N_STREAM K_TYPE V_TYPE V_IS_K_VIEW SCALE MAX_BIAS SOFTCAP";
    return false;
  }
  std::string extra;
  if (in >> extra) {
    why = "unexpected \"" + extra + "\" after the 14 fields";
    return false;
  }
  if (q.head_k <= 0 || q.head_v <= 0 || q.n_head <= 0 || q.n_head_kv <= 0 || q.n_kv <= 0 || q.n_tokens <= 0 || q.n_stream <= 0) {
    why = "every size must be 1 or more";
    return false;
  }
  if (q.n_tokens % q.n_stream != 0) {
    why = "N_TOKENS " + std::to_string(q.n_tokens) + " is not a multiple of N_STREAM " + std::to_string(q.n_stream);
    return false;
  }
  if (q.n_head % q.n_head_kv != 0) {
    why = "N_HEAD " + std::to_string(q.n_head) + " is not a multiple of N_HEAD_KV " + std::to_string(q.n_head_kv);
    return false;
  }
  if (q.v_is_k_view && (q.head_v > q.head_k || q.k_type != q.v_type)) {
    why = "V as a view of K needs HEAD_V <= HEAD_K and one type";
    return false;
  }
  return true;
}

class Answers {
 public:
  explicit Answers(const std::string& path) : out_(path, std::ios::trunc) {}
  bool ok() const { return static_cast<bool>(out_); }
  template <typename... T>
  void line(const T&... fields) {
    bool first = true;
    ((out_ << (first ? "" : "\t") << fields, first = false), ...);
    out_ << '\n';
    out_.flush();
  }

 private:
  std::ofstream out_;
};

// The FLASH_ATTN_EXT node as llama.cpp builds it (src/llama-graph.cpp build_attn_mha, the K/V views
// of src/llama-kv-cache.cpp get_k/get_v with Flash Attention on, the mask of build_attn_inp_kq_mask):
//   q    rope's output [head_k, n_head, n_tokens] f32, viewed as [.., n_tokens/n_stream, n_stream] and
//        permuted to [head_k, n_tokens/n_stream, n_head, n_stream]
//   k    a view [head_k, n_head_kv, n_kv, n_stream] of the cache [head_k*n_head_kv, n_kv, n_stream] of
//        K_TYPE, permuted to [head_k, n_kv, n_head_kv, n_stream]; v the same with head_v and V_TYPE
//        (not transposed: FA on), or, for MLA's K-only cache, K's first head_v values with K's strides
//   mask f16 [n_kv, n_tokens/n_stream, 1, n_stream] (ggml 0.27 no longer pads it to GGML_KQ_MASK_PAD)
//   precision F32, as llama-graph sets it.
struct Node {
  ggml_tensor* fa = nullptr;
  ggml_tensor* k_cache = nullptr;
  ggml_tensor* v_cache = nullptr;  // null for MLA's K-only cache
};

Node build_node(const Ggml& g, ggml_context* ctx, const Query& q, int k_type, int v_type) {
  const int64_t ns = q.n_stream, tokens = q.n_tokens / ns;
  const size_t f32 = 4;
  ggml_tensor* q_cur = g.new_tensor_4d(ctx, kGgmlTypeF32, q.head_k, q.n_head, q.n_tokens, 1);
  ggml_tensor* qv = g.view_4d(ctx, q_cur, q.head_k, q.n_head, tokens, ns, f32 * q.head_k, f32 * q.head_k * q.n_head,
                              f32 * q.head_k * q.n_head * tokens, 0);
  ggml_tensor* qp = g.permute(ctx, qv, 0, 2, 1, 3);

  const int64_t k_gqa = q.head_k * q.n_head_kv;
  ggml_tensor* k_cache = g.new_tensor_4d(ctx, k_type, k_gqa, q.n_kv, ns, 1);
  ggml_tensor* kv4 = g.view_4d(ctx, k_cache, q.head_k, q.n_head_kv, q.n_kv, ns, g.row_size(k_type, q.head_k),
                               g.row_size(k_type, k_gqa), g.row_size(k_type, k_gqa * q.n_kv), 0);
  ggml_tensor* vv4 = nullptr;
  ggml_tensor* v_cache = nullptr;
  if (q.v_is_k_view) {
    vv4 = g.view_4d(ctx, kv4, q.head_v, q.n_head_kv, q.n_kv, ns, g.row_size(k_type, q.head_k), g.row_size(k_type, k_gqa),
                    g.row_size(k_type, k_gqa * q.n_kv), 0);
  } else {
    const int64_t v_gqa = q.head_v * q.n_head_kv;
    v_cache = g.new_tensor_4d(ctx, v_type, v_gqa, q.n_kv, ns, 1);
    vv4 = g.view_4d(ctx, v_cache, q.head_v, q.n_head_kv, q.n_kv, ns, g.row_size(v_type, q.head_v),
                    g.row_size(v_type, v_gqa), g.row_size(v_type, v_gqa * q.n_kv), 0);
  }
  ggml_tensor* kp = g.permute(ctx, kv4, 0, 2, 1, 3);
  ggml_tensor* vp = g.permute(ctx, vv4, 0, 2, 1, 3);
  ggml_tensor* mask = g.new_tensor_4d(ctx, kGgmlTypeF16, q.n_kv, tokens, 1, ns);
  ggml_tensor* node = g.flash_attn_ext(ctx, qp, kp, vp, mask, q.scale, q.max_bias, q.softcap);
  g.flash_attn_ext_set_prec(node, kGgmlPrecF32);
  return {node, k_cache, v_cache};
}

// ggml's log, quiet unless a warning or an error (the backends print their device lines at INFO).
void quiet_log(int level, const char* text, void*) {
  if (level >= 3 && text) std::fputs(text, stderr);  // GGML_LOG_LEVEL_WARN, ERROR
}

}  // namespace

int main(int argc, char** argv) {
  std::string lib, queries_path, answers_path, backend_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "flashproof-ggml-query: %s needs a value\n", a.c_str());
        std::exit(64);
      }
      dst = argv[++i];
    };
    if (a == "--ggml") value(lib);
    else if (a == "--queries") value(queries_path);
    else if (a == "--answers") value(answers_path);
    else if (a == "--backend-dir") value(backend_dir);
    else {
      std::fprintf(stderr,
                   "flashproof-ggml-query: unknown argument \"%s\"\n"
                   "usage: flashproof-ggml-query --ggml LIBGGML --queries FILE --answers FILE [--backend-dir DIR]\n",
                   a.c_str());
      return 64;
    }
  }
  if (lib.empty() || queries_path.empty() || answers_path.empty()) {
    std::fprintf(stderr, "usage: flashproof-ggml-query --ggml LIBGGML --queries FILE --answers FILE [--backend-dir DIR]\n");
    return 64;
  }
  Answers out(answers_path);
  if (!out.ok()) {
    std::fprintf(stderr, "flashproof-ggml-query: cannot write %s\n", answers_path.c_str());
    return 2;
  }
  std::ifstream in(queries_path);
  if (!in) {
    out.line("fatal", "cannot read the queries file " + queries_path);
    return 2;
  }

  Ggml g;
  if (std::string why = load_ggml(lib, g); !why.empty()) {
    out.line("fatal", clean(why.c_str()));
    std::fprintf(stderr, "flashproof-ggml-query: %s\n", why.c_str());
    return 2;
  }
  if (g.log_set) g.log_set(quiet_log, nullptr);
  out.line("ggml", clean(g.version()), clean(g.commit()));

  std::map<std::string, int> types;
  for (const auto& [name, value] : kCacheTypes) {
    const char* n = g.type_name(value);
    if (!n || std::strcmp(n, name) != 0) {
      out.line("fatal", "ggml_type_name(" + std::to_string(value) + ") is \"" + clean(n) + "\", not \"" + name +
                            "\": an ABI this helper does not know");
      return 2;
    }
    types.emplace(name, value);
  }

  if (backend_dir.empty()) g.backend_load_all();
  else g.backend_load_all_from_path(backend_dir.c_str());
  const size_t n_dev = g.dev_count();
  std::vector<ggml_backend_dev_t> devs;
  for (size_t i = 0; i < n_dev; ++i) {
    ggml_backend_dev_t d = g.dev_get(i);
    devs.push_back(d);
    const int t = g.dev_type(d);
    out.line("device", i, clean(g.dev_name(d)), clean(g.reg_name(g.dev_backend_reg(d))),
             std::string(device_type_name(t)) + (t >= 0 && t < 5 ? "" : " " + std::to_string(t)),
             clean(g.dev_description(d)));
  }

  const auto t0 = std::chrono::steady_clock::now();
  size_t asked = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    Query q;
    std::string why;
    if (!parse_query(line, q, why)) {
      std::istringstream id_in(line);
      std::string id;
      id_in >> id;
      out.line("error", id, why);
      continue;
    }
    if (!types.count(q.k_type) || !types.count(q.v_type)) {
      std::string known;
      for (const auto& [name, value] : kCacheTypes) known += std::string(known.empty() ? "" : ", ") + name;
      out.line("error", q.id, "no K/V cache type \"" + (types.count(q.k_type) ? q.v_type : q.k_type) + "\"; known: " + known);
      continue;
    }
    const int kt = types.at(q.k_type), vt = types.at(q.v_type);
    // llama_init_from_model refuses a quantized cache whose block does not divide the head size; ggml
    // would abort on the view (ggml_row_size asserts it).
    if (q.head_k % g.blck_size(kt) != 0 || q.head_v % g.blck_size(vt) != 0) {
      const bool k_bad = q.head_k % g.blck_size(kt) != 0;
      out.line("refused", q.id,
               std::string(k_bad ? "K" : "V") + " cache type " + (k_bad ? q.k_type : q.v_type) + " with block size " +
                   std::to_string(g.blck_size(k_bad ? kt : vt)) + " does not divide the head size " +
                   std::to_string(k_bad ? q.head_k : q.head_v));
      continue;
    }
    ggml_init_params params{64 * g.tensor_overhead() + 4096, nullptr, true};
    ggml_context* ctx = g.init(params);
    if (!ctx) {
      out.line("fatal", "ggml_init failed for a no-alloc context");
      return 2;
    }
    const Node node = build_node(g, ctx, q, kt, vt);
    if (std::strcmp(g.op_desc(node.fa), "FLASH_ATTN_EXT") != 0) {
      out.line("fatal", std::string("ggml_flash_attn_ext built a node whose op is ") + clean(g.op_desc(node.fa)) +
                            ", not FLASH_ATTN_EXT: an ABI this helper does not know");
      g.free(ctx);
      return 2;
    }
    for (size_t i = 0; i < devs.size(); ++i) {
      out.line("answer", q.id, i, g.dev_supports_op(devs[i], node.fa) ? "yes" : "no");
      const bool cache = g.dev_supports_op(devs[i], node.k_cache) && (!node.v_cache || g.dev_supports_op(devs[i], node.v_cache));
      out.line("cache", q.id, i, cache ? "yes" : "no");
    }
    g.free(ctx);
    ++asked;
  }
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
  out.line("done", asked, us);
  return 0;
}

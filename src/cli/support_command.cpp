// flashproof support: asks the runtime's own ggml backends whether they take the fused attention node
// for the shapes given (src/support/); prints the table, writes support.txt and support.json.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/passes/case_context.h"
#include "runtime/adapter.h"
#include "runtime/process.h"
#include "support/case_shapes.h"
#include "support/ggml_query_runner.h"
#include "support/support_table.h"
#include "util/split_list.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kSupportUsageText =
    "usage: flashproof support SHAPES... [--kv TYPES] [--kv-lengths N,...] [--batch N,...] [options]\n"
    "Asks the runtime's own ggml (the libggml its executable links and the backends ggml loads for it,\n"
    "started through the runtime's loader as the case launches it) whether each backend device supports\n"
    "the fused attention node, FLASH_ATTN_EXT, for the shapes given: the node built as llama.cpp builds it\n"
    "(Q, the K and V cache views, the f16 mask, the model's softcap), in a no-alloc context. No weights,\n"
    "no launch: milliseconds per thousand nodes. A \"no\" is what sends the node to another device (the\n"
    "CPU) at run time: the silent fallback. Prints one row per shape x K/V pair x KV length x batch x\n"
    "device, then a summary per device.\n\n"
    "shapes (at least one; they add up):\n"
    "  --public [NAMES]     the public configs flashproof ships (fixtures/models/public/configs.json): all of\n"
    "                       them, or the comma-separated NAMES (e.g. Llama-3.1-70B,DeepSeek-V3)\n"
    "  --shapes FILE        public configs from another file of that format\n"
    "  --recipe FILE.json   a model recipe (fixtures/models/*.json)\n"
    "  --head-sizes N,...   with --recipe: the recipe with these head sizes instead, heads and KV heads kept\n"
    "  --gguf FILE          a model's GGUF header (only the header is read)\n"
    "  --case FILE.json     a case: its model's GGUF header; its K/V types, context, -ub/-b and -np from its\n"
    "                       launch line (the axes' defaults for this shape); its launch.env and runtime\n"
    "axes (comma-separated; an option given applies to every shape):\n"
    "  --kv TYPES           K/V cache pairs as `flashproof matrix --kv` takes them: TYPE, K/V, same, all;\n"
    "                       types from the runtime data's kv_cache (default: same, every type the runtime\n"
    "                       accepts; an f32 cache reaches the node as f16, as llama.cpp casts it)\n"
    "  --kv-lengths N,...   KV cells attended (default 4096,8192,32768,131072)\n"
    "  --batch N,...        query tokens per step: 1 is a decode step, 512 a prefill ubatch (default 1,512)\n"
    "options:\n"
    "  --runtime PATH       the runtime's executable or prefix folder (default: found as `flashproof run`\n"
    "                       finds it: $FLASHPROOF_LLAMA_SERVER, ci/setup.sh's env.sh, PATH)\n"
    "  --env NAME=VALUE     for ggml as for the runtime, repeatable (e.g. GGML_VK_VISIBLE_DEVICES=0)\n"
    "  --out DIR            also write support.txt and support.json there\n"
    "  --json               print the JSON instead of the text\n"
    "  --quiet              print the header and the summary, not the rows\n" FP_ROOT_OPTION_USAGE
    "exit: 0 answered (a \"no\" is an answer), 2 the backends could not be asked (the runtime's ggml, the\n"
    "      helper flashproof-ggml-query, a shapes file, recipe, model or case that cannot be read),\n"
    "      64 usage, 125 skipped (no runtime or no model here)\n";

constexpr int kSupportFailed = 2;
constexpr int kSupportSkip = 125;

std::vector<int> support_numbers(Args& args, long lo, long hi) {
  const std::string option = args.arg();
  const std::string v = args.value();
  std::vector<int> out;
  for (const std::string& item : split_list(v, ',', ListItems::NonEmptyUnique)) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (*end || n < lo || n > hi)
      args.usage_error(option + " " + quote(v) + ": item " + quote(item) + " is not a whole number from " + std::to_string(lo) +
                       " to " + std::to_string(hi));
    out.push_back(static_cast<int>(n));
  }
  if (out.empty()) args.usage_error(option + " needs a list, e.g. 4096,32768");
  return out;
}

struct SupportOptions {
  std::optional<std::string> public_names;  // "" = every public config
  std::vector<std::string> shape_files, recipes, ggufs;
  std::string case_path, runtime_path, out_dir, root;
  std::vector<int> head_sizes, kv_lengths, batches;
  std::string kv;
  std::map<std::string, std::string> env;
  bool json = false, quiet = false;
};

int support_fail(const std::string& message, int code = kSupportFailed) {
  std::cerr << "flashproof support: " << message << "\n";
  return code;
}

std::vector<StepBatch> step_batches(const std::vector<int>& tokens) {
  std::vector<StepBatch> out;
  for (int t : tokens) out.push_back({t, 1});
  return out;
}

}  // namespace

int support_command(int argc, char** argv) {
  SupportOptions o;
  Args args("support", argc, argv, kSupportUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kSupportUsageText;
      return 0;
    } else if (a == "--public") {
      o.public_names = args.optional_value().value_or("");
    } else if (a == "--shapes") {
      o.shape_files.push_back(args.value());
    } else if (a == "--recipe") {
      o.recipes.push_back(args.value());
    } else if (a == "--gguf") {
      o.ggufs.push_back(args.value());
    } else if (a == "--case") {
      if (!o.case_path.empty()) args.usage_error("one --case at a time");
      o.case_path = args.value();
    } else if (a == "--head-sizes") {
      o.head_sizes = support_numbers(args, 1, 4096);
    } else if (a == "--kv") {
      o.kv = args.value();
      if (o.kv.empty()) args.usage_error("--kv needs a list, e.g. f16,q8_0,q8_0/f16");
    } else if (a == "--kv-lengths") {
      o.kv_lengths = support_numbers(args, 1, 1 << 24);
    } else if (a == "--batch") {
      o.batches = support_numbers(args, 1, 1 << 16);
    } else if (a == "--runtime") {
      o.runtime_path = args.value();
    } else if (a == "--env") {
      const std::string v = args.value();
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) args.usage_error("--env " + quote(v) + ": expected NAME=VALUE");
      o.env[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (a == "--out") {
      o.out_dir = args.value();
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--root") {
      o.root = args.value();
    } else {
      args.usage_error("unknown argument " + quote(a));
    }
  }
  if (!o.public_names && o.shape_files.empty() && o.recipes.empty() && o.ggufs.empty() && o.case_path.empty())
    args.usage_error("name the shapes to ask about: --public, --shapes FILE, --recipe FILE, --gguf FILE or --case FILE");
  if (!o.head_sizes.empty() && o.recipes.empty()) args.usage_error("--head-sizes needs --recipe (the shape to vary)");
  install_child_cleanup_handlers();

  // The case (if any) decides the runtime; else llama-server's data.
  std::optional<CaseContext> case_ctx;
  std::string runtime_name = "llama-server";
  if (!o.case_path.empty()) {
    auto suite = command_suite(o.root, {o.case_path});
    if (!suite) return support_fail(suite.error().message);
    auto resolved = resolve_case_context(o.case_path, *suite, o.runtime_path);
    if (!resolved) {
      const std::string& m = resolved.error().message;
      if (resolved.exit_code() == kResolveSkip) {
        std::cout << m << "\n";
        return kSupportSkip;
      }
      return support_fail(m);
    }
    case_ctx = *resolved;
    runtime_name = case_ctx->c.runtime;
  }
  auto rules = load_support_rules(runtime_name);
  if (!rules) return support_fail(rules.error().message);
  auto kv_types = load_kv_cache_types(runtime_name);
  if (!kv_types) return support_fail(kv_types.error().message);
  std::vector<KvPair> pairs;
  if (!o.kv.empty()) {
    auto p = parse_kv_pairs(o.kv, *kv_types);
    if (!p) args.brief_usage_error(p.error().message);
    pairs = *p;
  }

  SupportRun run;
  // Shapes asked on the generic axes (or those given).
  std::vector<AttentionShape> shapes;
  auto add_public = [&](const std::string& path, const std::optional<std::string>& names) -> Status {
    FP_TRY(std::vector<AttentionShape> all, load_public_shapes(path));
    if (names && !names->empty()) {
      FP_TRY(all, select_shapes(all, *names, path));
    }
    run.sources.push_back(std::to_string(all.size()) + " public config(s) from " + path);
    shapes.insert(shapes.end(), all.begin(), all.end());
    return ok_status();
  };
  if (o.public_names)
    if (auto st = add_public(shipped_public_shapes_path(), o.public_names); !st) return support_fail(st.error().message);
  for (const auto& f : o.shape_files)
    if (auto st = add_public(f, std::nullopt); !st) return support_fail(st.error().message);
  for (const auto& f : o.recipes) {
    auto r = load_model_recipe(f);
    if (!r) return support_fail(r.error().message);
    if (o.head_sizes.empty()) {
      shapes.push_back(shape_of_recipe(*r));
    } else {
      for (int h : o.head_sizes) {
        AttentionShape s = shape_of_recipe(*r);
        s.name = r->name + "-hd" + std::to_string(h);
        s.source = "recipe " + f + " with head size " + std::to_string(h);
        s.head_k = s.head_v = h;
        s.n_embd = h * s.n_head;
        s.scale = 1.0 / std::sqrt(static_cast<double>(h));
        shapes.push_back(s);
      }
    }
    run.sources.push_back("recipe " + f);
  }
  for (const auto& f : o.ggufs) {
    auto meta = read_gguf_metadata(f);
    if (!meta) return support_fail(meta.error().message);
    auto s = shape_of_gguf(*meta);
    if (!s) return support_fail(s.error().message);
    shapes.push_back(*s);
    run.sources.push_back("GGUF header of " + f);
  }
  const std::vector<KvPair> generic_pairs = !pairs.empty() ? pairs : *parse_kv_pairs("same", *kv_types);
  const std::vector<int> generic_lengths = !o.kv_lengths.empty() ? o.kv_lengths : std::vector<int>{4096, 8192, 32768, 131072};
  const std::vector<StepBatch> generic_batches = step_batches(!o.batches.empty() ? o.batches : std::vector<int>{1, 512});
  for (const auto& s : shapes)
    if (auto st = check_shape(s); !st) return support_fail(st.error().message);
  run.plan = plan_support(shapes, generic_pairs, generic_lengths, generic_batches, rules->f32_cast_to);

  BackendQuestion question;
  question.env = o.env;
  if (case_ctx) {
    auto line = load_launch_line(runtime_name);
    if (!line) return support_fail(line.error().message);
    auto cq = case_question(*case_ctx, *rules, *kv_types, *line);
    if (!cq) return support_fail(cq.error().message);
    const SupportPlan case_plan =
        plan_support({cq->shape}, !pairs.empty() ? pairs : std::vector<KvPair>{cq->kv},
                     !o.kv_lengths.empty() ? o.kv_lengths : std::vector<int>{cq->kv_length},
                     !o.batches.empty() ? step_batches(o.batches) : cq->batches, rules->f32_cast_to);
    append_plan(run.plan, case_plan);
    run.sources.push_back("case " + o.case_path);
    run.notes.insert(run.notes.end(), cq->notes.begin(), cq->notes.end());
    for (const auto& [k, v] : cq->env) question.env.emplace(k, v);  // --env wins
    question.runtime = case_ctx->runtime;
  } else {
    auto adapter = load_adapter(runtime_name);
    if (!adapter) return support_fail(adapter.error().message);
    auto runtime = o.runtime_path.empty() ? locate_runtime(*adapter) : runtime_from_path(o.runtime_path, *adapter);
    if (!runtime) {
      std::cout << "SKIP: " << runtime.error().message << "\n";
      return kSupportSkip;
    }
    question.runtime = *runtime;
  }
  run.runtime_how_found = join(question.runtime.prefix, " ") + " (" + question.runtime.how_found + ")";

  auto helper = find_ggml_query_helper();
  if (!helper) return support_fail(helper.error().message);
  question.helper = *helper;
  std::error_code ec;
  question.scratch_dir = (std::filesystem::temp_directory_path(ec) / ("flashproof-support-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(question.scratch_dir, ec);
  auto lib = runtime_library(question.runtime, rules->library, question.scratch_dir);
  if (!lib) {
    std::filesystem::remove_all(question.scratch_dir, ec);
    return support_fail(lib.error().message);
  }
  question.libggml = *lib;
  run.libggml = *lib;
  auto reply = ask_backends(question, run.plan);
  std::filesystem::remove_all(question.scratch_dir, ec);
  if (interrupted()) return support_fail("interrupted by signal " + std::to_string(interrupt_signal()), 128 + interrupt_signal());
  if (!reply) return support_fail(reply.error().message);
  run.reply = *reply;

  const std::string text = support_text(run);
  const std::string json = support_json(run).dump(2) + "\n";
  if (!o.out_dir.empty()) {
    std::filesystem::create_directories(o.out_dir, ec);
    for (const auto& [name, content] : {std::pair<std::string, const std::string&>{"support.txt", text}, {"support.json", json}})
      if (auto st = write_file_atomic(o.out_dir + "/" + name, content); !st) return support_fail(st.error().message);
  }
  if (o.json) {
    std::cout << json;
  } else if (o.quiet) {
    const size_t rows = text.find("\n\n");
    const size_t summary = text.find("\nsummary\n");
    std::cout << text.substr(0, rows + 1) << (summary == std::string::npos ? "" : text.substr(summary));
  } else {
    std::cout << text;
  }
  if (!o.out_dir.empty()) std::cout << "\nsupport: " << o.out_dir << "/support.txt (support.json)\n";
  return 0;
}

}  // namespace fp

// flashproof matrix CASE.json: the case once per combination of KV cache types, flag, context and
// head size (flow/matrix/matrix_runner.h); prints the table, writes matrix.txt, matrix.json, report.html.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/args.h"
#include "cli/commands.h"
#include "cli/suite_option.h"
#include "flow/matrix/matrix_runner.h"
#include "report/html_report.h"
#include "runtime/process.h"
#include "util/split_list.h"
#include "util/text.h"

namespace fp {
namespace {

const char* kMatrixUsageText =
    "usage: flashproof matrix CASE.json [--kv TYPES] [--flag on,auto,off] [--context N,...] [--head-sizes N,...] [options]\n"
    "Launches the case once per combination and says where fused attention really runs: for each, the\n"
    "evidence pass of `flashproof run` (verdict, attention nodes per backend, attention kernels where the\n"
    "probe runs, the known cause of a fallback) and a short prompt-speed launch without verbose logging\n"
    "(one prompt of fixed length: the runtime's own timings.prompt_per_second and flashproof's prompt\n"
    "tokens over time to first token, time to first token, the runtime's decode tokens/s), compared with\n"
    "the flag off for the same combination, and the KV cache and compute buffers the runtime logged. A\n"
    "combination the runtime refuses, or one that fails, is a row saying so. Prints the table; writes\n"
    "matrix.txt, matrix.json and report.html (also `flashproof report DIR`).\n\n"
    "axes (each a comma-separated list; rows: head sizes x contexts x KV pairs x flags):\n"
    "  --kv TYPES           KV cache pairs: TYPE (K and V the same, e.g. q8_0), K/V (e.g. q8_0/f16), `same`\n"
    "                       (every type the runtime accepts), `all` (every same pair and the mixed pairs that\n"
    "                       matter); types from src/runtime/data/<runtime>.json \"kv_cache\". Default: as the\n"
    "                       case launches\n"
    "  --flag on,auto,off   the flag's values to launch with (default on,off); auto is the runtime's default\n"
    "                       value (its data's flag.default: -fa auto), any verdict as expected\n"
    "  --context N,...      contexts ({context} in the launch line; default the case's shape.context)\n"
    "  --head-sizes N,...   models generated from the case's model recipe with these head sizes, same seed,\n"
    "                       otherwise the same shape (even, from 8; default: the case's model)\n"
    "options:\n"
    "  --prompt-chars N     characters of the document before the case's first prompt (default 1000; at most\n"
    "                       a third of the row's context); the evidence pass and the speed launch send the same prompt\n"
    "  --document PATH      the document, a path in the suite or absolute (default the case's long_prompt\n"
    "                       document, else documents/operations_manual.txt of the suite's prompts or flashproof's)\n"
    "  --rounds N           timed prompt requests per combination after one warm-up (default 3)\n"
    "  --max-tokens N       tokens out per request (default 4)\n"
    "  --models DIR         where generated models go (default beside the recipe's model, in matrix/)\n"
    "  --out DIR            the matrix folder (new or empty, as run's); default results/<fingerprint>/<case>/matrix-<stamp>\n"
    "  --results DIR        root of the results (default: the suite's results/)\n"
    FP_ROOT_OPTION_USAGE
    "  --quiet              no progress lines\n"
    "A row is as expected when it ran (the verdict decided: active or not active, whichever it is; the\n"
    "matrix reports a fallback, it does not fail on it) or the runtime refused the combination with a\n"
    "line its data marks fatal (e.g. a quantized V cache with the flag off).\n"
    "exit: 0 every row as expected, 1 a row failed (launch or request failed, no evidence, levels disagree),\n"
    "      2 the matrix could not run or finish, 64 usage, 125 skipped (no runtime, model, or GPU here),\n"
    "      128+N interrupted by signal N (what ran is written; the other rows say \"not run\")\n";

std::vector<int> numbers(Args& args, long lo, long hi) {
  const std::string option = args.arg();
  const std::string v = args.value();
  std::vector<int> out;
  for (const std::string& item : split_list(v)) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || n < lo || n > hi)
      args.usage_error(option + " " + quote(v) + ": item " + quote(item) + " is not a whole number from " + std::to_string(lo) + " to " +
                       std::to_string(hi));
    out.push_back(static_cast<int>(n));
  }
  return out;
}

std::vector<std::string> flags(Args& args) {
  const std::string v = args.value();
  std::vector<std::string> out;
  for (const std::string& item : split_list(v)) {
    if (item != "on" && item != "off" && item != "auto") args.usage_error("--flag " + quote(v) + ": item " + quote(item) + " is not on, off or auto");
    out.push_back(item);
  }
  return out;
}

}  // namespace

int matrix_command(int argc, char** argv) {
  MatrixOptions o;
  OneCaseArgs one;
  Args args("matrix", argc, argv, kMatrixUsageText);
  while (args.next()) {
    const std::string& a = args.arg();
    if (a == "-h" || a == "--help") {
      std::cout << kMatrixUsageText;
      return 0;
    } else if (a == "--kv") {
      o.kv = args.value();
      if (o.kv.empty()) args.usage_error("--kv needs a list, e.g. f16,q8_0,q8_0/f16");
    } else if (a == "--flag") {
      o.flags = flags(args);
    } else if (a == "--context") {
      o.contexts = numbers(args, 16, 1 << 24);
    } else if (a == "--head-sizes") {
      o.head_sizes = numbers(args, 8, 4096);
      for (int h : o.head_sizes)
        if (h % 2) args.usage_error("--head-sizes: " + std::to_string(h) + " is odd; the generator takes even head sizes (RoPE rotates pairs)");
    } else if (a == "--prompt-chars") {
      o.prompt_chars = args.whole(0, 1 << 24);
    } else if (a == "--document") {
      o.prompt_document = args.value();
    } else if (a == "--rounds") {
      o.rounds = args.whole(1, 1000);
    } else if (a == "--max-tokens") {
      o.max_tokens = args.whole(1, 4096);
    } else if (a == "--models") {
      o.models_dir = args.value();
    } else if (a == "--out") {
      o.out_dir = args.value();
    } else if (a == "--results") {
      o.results_root = args.value();
    } else {
      take_one_case_arg(args, one);
    }
  }
  int code = 0;
  auto suite = one_case_suite("matrix", one, kMatrixUsageText, kMatrixUsage, kMatrixIncomplete, &code);
  if (!suite) return code;
  const std::string& case_path = one.case_path;
  o.quiet = one.quiet;
  o.suite = *suite;
  install_child_cleanup_handlers();
  MatrixOutcome out = run_matrix(case_path, o);
  if (!out.message.empty()) {
    std::cerr << "flashproof matrix: " << out.message << "\n";
    return out.exit_code;
  }
  const MatrixRun& m = out.run;
  std::cout << matrix_table(m);
  for (const auto& e : m.errors) std::cout << "ERROR: " << e << "\n";
  const std::string html = m.output_dir + "/report.html";
  auto data = load_report_data(m.output_dir);
  if (!data) std::cerr << "flashproof matrix: report.html not written: " << data.error().message << "\n";
  else if (auto st = write_file_atomic(html, render_html_report(*data)); !st)
    std::cerr << "flashproof matrix: " << st.error().message << "\n";
  std::cout << "\nmatrix: " << m.output_dir << "/matrix.txt (matrix.json, report.html)\n";
  if (interrupted()) {
    std::cerr << "flashproof matrix: interrupted by signal " << interrupt_signal() << "; the rows not run say so\n";
    return 128 + interrupt_signal();
  }
  return out.exit_code;
}

}  // namespace fp

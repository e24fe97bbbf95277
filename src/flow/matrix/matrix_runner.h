// The support matrix: a case launched once per combination of KV cache types, flag, context and
// model head size. Each combination gets the evidence pass (flow/passes/evidence_pass.h: the same levels,
// verdict and known causes as `flashproof run`) and a short prompt-speed launch (flow/passes/timed_pass.h:
// the quiet configuration, one prompt of fixed length, the runtime's own prompt tokens/s and
// flashproof's). A combination the runtime refuses, or one that fails, is a row saying so; the
// matrix goes on. The matrix is a report, not a gate: a fallback is a row, not a failure.
#pragma once

#include <string>
#include <vector>

#include "case/suite.h"
#include "report/matrix_report.h"

namespace fp {

struct MatrixOptions {
  Suite suite;                       // the case's suite (case/suite.h): its paths are relative to suite.root
  std::string results_root;          // default the suite's results folder
  std::string out_dir;               // default results_root/<fingerprint>/<case>/matrix-<stamp>-<pid>
  std::string kv;                    // --kv list (runtime/kv_cache_types.h parse_kv_pairs); "": the case's own
  std::vector<std::string> flags = {"on", "off"};  // "on", "off", "auto" (the runtime's default value), in this order
  std::vector<int> contexts;         // empty: the case's shape.context
  std::vector<int> head_sizes;       // empty: the case's model; else models generated from its recipe
  std::string models_dir;            // where generated models go; default <suite>/<recipe output folder>/matrix
  std::string prompt_document;       // a path in the suite, or absolute; default: the case's long_prompt
                                     // document, else kDefaultMatrixDocument from the suite's prompts or flashproof's
  int prompt_chars = 1000;           // characters of the document before the case's first prompt (at most context/3)
  int rounds = 3;                    // timed prompt requests per combination (after one warm-up)
  int max_tokens = 4;                // tokens out per request
  bool quiet = false;
};

// Looked up in the suite's prompt folders, then in the prompt sets flashproof ships (Suite::prompt_dirs).
inline constexpr const char* kDefaultMatrixDocument = "documents/operations_manual.txt";

// 0 every row as expected (ran, or refused by the runtime for a reason its data knows), 1 a row
// failed, 2 the matrix could not run or finish (bad case, a model that cannot be generated, results
// that cannot be written, interrupted), 64 usage (an invalid --kv item, --context without {context}),
// 125 skipped (no runtime here, model missing, GPU case without a GPU).
enum MatrixExit { kMatrixAsExpected = 0, kMatrixRowFailed = 1, kMatrixIncomplete = 2, kMatrixUsage = 64, kMatrixSkip = 125 };

struct MatrixOutcome {
  MatrixRun run;
  int exit_code = kMatrixIncomplete;
  std::string message;  // an error before any row ran
};

MatrixOutcome run_matrix(const std::string& case_path, const MatrixOptions& options);

// Each flag-on row's prompt speed over the flag-off row of the same KV pair, context and head size
// (NAN where either was not measured).
void compare_with_flag_off(std::vector<MatrixRow>& rows);

// Where an interrupt (SIGINT, SIGTERM: a deadline's timeout) cut a row. Cut under the evidence pass,
// the row was not run; cut under the prompt-speed launch, the evidence pass's verdict, nodes, kernels
// and memory stand and the speed columns say "not measured" (the matrix is still incomplete: exit 2).
enum class RowCut { none, evidence, speed };
void settle_interrupted_row(MatrixRow& row, RowCut cut);

// The exit code for finished rows and harness errors (see MatrixExit).
int matrix_exit_code(const MatrixRun& m);

}  // namespace fp

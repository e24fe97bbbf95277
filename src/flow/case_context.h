// What every pass of one case run shares: the case and what was resolved from it.
#pragma once

#include <string>
#include <vector>

#include "case/case_file.h"
#include "case/prompt_set.h"
#include "evidence/runtime_signatures.h"
#include "runtime/adapter.h"
#include "runtime/launcher.h"

namespace fp {

struct CaseContext {
  Case c;
  Adapter adapter;
  RuntimeSignatures signatures;
  RuntimeCommand runtime;
  std::string model_path;         // absolute
  std::vector<Prompt> prompts;
  std::string out_dir;            // this run's folder
  std::string flag_value;         // the flag value this run launches with
};

}  // namespace fp

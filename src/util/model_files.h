// The files of a model: one file, or every shard of a split GGUF as llama.cpp's gguf-split names
// them (NAME-00001-of-00003.gguf ... NAME-00003-of-00003.gguf, in one folder). The runtime is given
// the first shard and loads the others itself, so each shard is part of what is tested.
#pragma once

#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

struct SplitName {
  int index = 0;  // 1-based
  int count = 0;  // 0: not a split name
};

// What a file name declares: {2, 3} for "m-00002-of-00003.gguf", {0, 0} for anything else.
SplitName split_name(const std::string& path);

// The model's files in shard order: {path} for one file; every shard for a split GGUF, which must be
// named by its first shard (the one llama.cpp accepts) and have all its shards beside it. Errors
// name the missing shard or say which shard to name.
Result<std::vector<std::string>> model_files(const std::string& path);

}  // namespace fp

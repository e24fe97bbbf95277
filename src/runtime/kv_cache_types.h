// The KV cache types a runtime accepts and how its launch line names them, from the "kv_cache"
// section of src/runtime/data/<runtime>.json (llama-server: -ctk / -ctv and the values its --help
// lists). Used by `flashproof matrix --kv`; a runtime without the section has no KV axis.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

// One K/V pair; written "q8_0" when both are the same, "q8_0/f16" (K/V) when they differ.
struct KvPair {
  std::string k, v;
  std::string label() const { return k == v ? k : k + "/" + v; }
  bool operator==(const KvPair& o) const { return k == o.k && v == o.v; }
};

struct KvCacheTypes {
  std::string data_file;
  std::vector<std::string> k_flags, v_flags;  // the first of each is the one added to a launch line
  std::vector<std::string> types;             // every value the runtime accepts, in the data's order
  std::string default_type;                   // what the runtime uses when no flag names a type
  std::vector<KvPair> mixed_pairs;            // the mixes `--kv all` adds to the same pairs
  // What one cached element of each type costs: ggml's block of `elements` takes `bytes` (f16: 1, 2;
  // q8_0: 32, 34). From the data's "block_bytes"; a type without an entry has no known size.
  struct BlockBytes {
    int elements = 1, bytes = 0;
  };
  std::map<std::string, BlockBytes> block_bytes;
};

// Parses the "kv_cache" section of a runtime data file's text; errors name the file and the field.
Result<KvCacheTypes> parse_kv_cache_types(const std::string& text, const std::string& path);
// The same for the runtime's data file (runtime/runtime_data.h); an error when it has no section.
Result<KvCacheTypes> load_kv_cache_types(const std::string& runtime);

// A comma-separated list of pairs: "q8_0" (same K and V), "q8_0/f16" (K/V), "same" (every type as
// a same pair), "all" (every same pair, then the data's mixed pairs). Duplicates are dropped, order
// kept. Errors name the item and list the valid types.
Result<std::vector<KvPair>> parse_kv_pairs(const std::string& list, const KvCacheTypes& t);

// The K and V types a launch line sets (the last of its K and V flags, "-ctk q8_0" or "-ctk=q8_0"),
// the runtime's default for a type it does not set.
KvPair kv_pair_of(const std::vector<std::string>& argv, const KvCacheTypes& t);

// The argv with the K and V types set: every existing K or V flag (and its value, or "--flag=value")
// removed, then the first K and V flags with the pair's types appended.
std::vector<std::string> with_kv_pair(const std::vector<std::string>& argv, const KvCacheTypes& t, const KvPair& p);

}  // namespace fp

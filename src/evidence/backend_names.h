// Backend names as a runtime's scheduler prints them, mapped back to the backends of that run.
// ggml's scheduler debug output prints a node's backend cut to five characters ("[%5.5s %8.8s]":
// Vulkan0 -> "Vulka", CUDA10 -> "CUDA1", RPC[10.0.0.2:50052] -> "RPC[1"), while its split headers
// ("## SPLIT #1: Vulkan0 # 9 inputs") and the device list printed at start ("- Vulkan0 : llvmpipe ...")
// name them whole. A printed name resolves to the whole name of the split it belongs to, when that
// split's name cuts to it (every node of a split runs on the split's backend: ggml starts a new split
// where the backend changes); else to the one backend of the run whose name cuts to it; where several
// do (Vulkan0 and Vulkan1; CUDA1 and CUDA10..CUDA15) and no split header says which, it stays
// ambiguous: never a guess.
#pragma once

#include <string>
#include <vector>

namespace fp {

// The name as printed at `width` characters ("%5.5s"); width <= 0: unchanged.
std::string cut_backend_name(const std::string& name, int width);

struct BackendName {
  std::string name;                     // the backend, whole; "" when ambiguous
  std::vector<std::string> candidates;  // when ambiguous: every backend of the run it may be
  std::string how;                      // "split header", "device list", or "" (printed whole, or unknown)
  bool ambiguous() const { return name.empty(); }
};

// The backends of one run, by whole name, and the resolution of printed names against them.
class RunBackends {
 public:
  explicit RunBackends(int width = 0) : width_(width) {}
  int width() const { return width_; }
  void add(const std::string& name);  // a whole name, from the device list or a split header
  const std::vector<std::string>& names() const { return names_; }
  // `printed`: a node's backend as printed; `split`: the whole name of the split it belongs to ("" when
  // no split header precedes it).
  BackendName resolve(const std::string& printed, const std::string& split) const;

 private:
  int width_;
  std::vector<std::string> names_;
};

// The key an ambiguous printed name is counted under ("CUDA1?"): no backend has that name.
std::string ambiguous_key(const std::string& printed);

// "CUDA1, CUDA10..CUDA15": consecutive numbers of one stem shortened to a range.
std::string candidates_text(const std::vector<std::string>& names);

}  // namespace fp

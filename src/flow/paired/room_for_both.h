// Whether the two arms' launches fit on this machine at once (interleaved blocks, PairedPlan::
// interleave), judged from a block that ran them one at a time: the lowest memory left while each
// arm served must hold the other arm's footprint half again (host: its peak resident set; every GPU:
// its peak GPU memory, plus llama.cpp's --fit margin of 1 GiB a device). A runtime that sizes itself
// to the memory it finds (llama.cpp's --fit: fewer GPU layers, a smaller context) would otherwise
// launch the second arm differently from the first: no longer the same system.
#pragma once

#include <string>

#include "flow/passes/timed_pass.h"

namespace fp {

struct RoomForBoth {
  bool fits = false;
  std::string why;  // in words, with the figures: "host: 3.1 GiB left, 2 x 0.4 GiB ..." or what was missing
};

// `on_gpu`: the case runs on a GPU (its expected backend is not the CPU; GPU memory measured on
// either arm says so too): GPU memory must have been measured on both arms, or the launches stay
// one at a time.
RoomForBoth room_for_both(const TimedPass& a, const TimedPass& b, bool on_gpu, const std::string& a_name = "baseline",
                          const std::string& b_name = "candidate");

}  // namespace fp

// Several models on one card: the headroom (measure/kv_headroom.h) beside what else holds the
// memory where the case's KV cache lives. Pure: the processes come measured (measure/memory_holders.h).
//
//   a neighbour running  (a process on its device matches)  its memory is already out of the memory
//                        left; what it holds below its declared memory is reserved (it may grow to it)
//   a neighbour not running                                 its declared memory is reserved
//   left(d)     = memory left on d - reservations on d                      (may go below zero)
//   fits        = cells + min over d of left(d) / (bytes per token x share(d))
//   short by    = deployed context - fits                                    (the case fails when > 0)
// so a case does not pass only because its neighbour happened to be down when it ran.
#pragma once

#include <string>

#include "measure/kv_headroom.h"

namespace fp {

// Whether `p` is the process `match` names: its command name equals it, or its command line holds it.
bool matches_process(const OtherProcess& p, const std::string& match);

// Fills h.others, h.neighbours and (in.check_deployed) h.deployed from `in` (the same input the
// headroom was computed from). Each process is taken for at most one neighbour, in the case's order.
void share_card(const HeadroomInput& in, Headroom& h);

}  // namespace fp

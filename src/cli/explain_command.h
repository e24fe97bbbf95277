// `flashproof explain`: reads a runtime log (and optionally a kernel tally), prints the verdict on
// fused attention with the evidence relied on.
#pragma once

namespace fp {

// flashproof explain --runtime NAME --log FILE [--kernels FILE] [--expect-backend NAME]
// Exit: 0 fused attention proven active, 1 proven not active (fallback, disagreement),
// 2 no evidence either way, 64 usage error (message names the bad argument).
int explain_command(int argc, char** argv);

}  // namespace fp

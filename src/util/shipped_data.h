// Where flashproof's shipped data lives (runtime data, prompt sets, model recipes, the suite
// template): share/flashproof beside the executable, found from the executable's own path, so that
// nothing depends on where flashproof was built.
#pragma once

#include <string>

namespace fp {

// <prefix>/share/flashproof for an installed <prefix>/bin/flashproof; <build>/share/flashproof for a
// build tree's <build>/flashproof (CMake links it to the sources). $FLASHPROOF_SHARE_DIR overrides
// both. When neither exists, the installed location (so that an error names a real place to look).
std::string shipped_data_dir();

// The CUPTI probe library beside the executable: <prefix>/lib/flashproof/libflashproof_probe.so when
// installed, <build>/src/probe/libflashproof_probe.so in a build tree; "" when neither exists.
std::string shipped_probe_library();

}  // namespace fp

// A string as one word of a POSIX shell command line: single-quoted, embedded quotes as '\'' (what
// flashproof prints for the operator to paste, and writes into the scripts it generates).
#pragma once

#include <string>

namespace fp {

// "it's" -> 'it'\''s'; a word of only safe characters (letters, digits, / . _ - + = : , @ %) stays bare.
std::string shell_word(const std::string& s);

}  // namespace fp

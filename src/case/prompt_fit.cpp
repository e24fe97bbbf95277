#include "case/prompt_fit.h"

#include <algorithm>
#include <cstdio>

#include "util/splitmix64.h"

namespace fp {
namespace {

std::vector<std::string> filler_words(uint64_t seed, size_t n) {
  static const char kConsonants[] = "bdfgklmnprstvz";
  static const char kVowels[] = "aeiou";
  SplitMix64 rng(seed);
  std::vector<std::string> words;
  words.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string w;
    const uint64_t syllables = 2 + rng.below(2);
    for (uint64_t s = 0; s < syllables; ++s) {
      w += kConsonants[rng.below(sizeof kConsonants - 1)];
      w += kVowels[rng.below(sizeof kVowels - 1)];
    }
    words.push_back(std::move(w));
  }
  return words;
}

std::string join_words(const std::vector<std::string>& words, size_t n) {
  std::string out;
  for (size_t i = 0; i < n && i < words.size(); ++i) {
    if (i) out += ' ';
    out += words[i];
  }
  return out;
}

// Fits one prompt: the filler is the first `n` words plus a short `tail`.
class Fitter {
 public:
  Fitter(const Prompt& base, int tokens, const TokenCounter& count, uint64_t seed)
      : base_(base), tokens_(tokens), count_(count), seed_(seed) {}

  Result<Prompt> run() {
    FP_TRY(int alone, count_at(0, ""));
    if (alone > tokens_)
      return make_error("prompt " + base_.id + " counts " + std::to_string(alone) + " tokens without filler, more than shape.prompt_tokens " +
                        std::to_string(tokens_) + "; ask for more tokens or use shorter prompts");
    if (alone == tokens_) return with(0, "");
    // Grow until over, then bisect: the largest word count not over the target.
    size_t lo = 0, hi = 1;
    const size_t cap = static_cast<size_t>(tokens_) * 2 + 16;  // every word is at least half a token
    for (;;) {
      FP_TRY(int c, count_at(hi, ""));
      if (c > tokens_) break;
      if (c == tokens_) return with(hi, "");
      lo = hi;
      if (hi >= cap) return no_fit("the count stops growing with more filler");
      hi = std::min(hi * 2, cap);
    }
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      FP_TRY(int c, count_at(mid, ""));
      if (c == tokens_) return with(mid, "");
      (c < tokens_ ? lo : hi) = mid;
    }
    return fine_steps(lo);
  }

 private:
  // After n words the count is below the target and one more word overshoots: add characters of the
  // next word (or short pieces), one at a time, keeping the longest tail still below the target.
  Result<Prompt> fine_steps(size_t n) {
    const std::string next = words(n + 1)[n];
    std::string tail;
    for (int step = 0; step < 64; ++step) {
      std::vector<std::string> pieces;
      if (tail.size() < next.size() + 1) pieces.push_back(tail.empty() ? " " + next.substr(0, 1) : std::string(1, next[tail.size() - 1]));
      for (const char* p : {" a", "a", ".", " "}) pieces.push_back(p);
      std::string best;
      int best_count = -1;
      for (const auto& piece : pieces) {
        FP_TRY(int c, count_at(n, tail + piece));
        if (c == tokens_) return with(n, tail + piece);
        if (c < tokens_ && c > best_count) best = piece, best_count = c;
      }
      if (best_count < 0) break;
      tail += best;
    }
    return no_fit("no filler of whole words and single characters counts exactly " + std::to_string(tokens_));
  }

  const std::vector<std::string>& words(size_t n) {
    if (words_.size() < n) words_ = filler_words(seed_, std::max(n, words_.size() * 2));
    return words_;
  }

  Prompt with(size_t n, const std::string& tail) {
    Prompt p = base_;
    std::string filler = join_words(words(n), n) + tail;
    std::string& content = p.messages.back().content;
    if (filler.empty()) return p;
    content = content.empty() ? filler : filler + "\n\n" + content;
    return p;
  }

  Result<int> count_at(size_t n, const std::string& tail) {
    auto c = count_(with(n, tail));
    if (!c) return make_error("prompt " + base_.id + ": counting its tokens: " + c.error().message);
    nearest_below_ = *c <= tokens_ ? std::max(nearest_below_, *c) : nearest_below_;
    if (*c > tokens_ && (nearest_above_ < 0 || *c < nearest_above_)) nearest_above_ = *c;
    return *c;
  }

  Error no_fit(const std::string& why) const {
    return make_error("prompt " + base_.id + ": cannot make it exactly " + std::to_string(tokens_) + " tokens (" + why + "; nearest counts " +
                      std::to_string(nearest_below_) + " and " + (nearest_above_ < 0 ? std::string("none above") : std::to_string(nearest_above_)) + ")");
  }

  const Prompt& base_;
  int tokens_;
  const TokenCounter& count_;
  uint64_t seed_;
  std::vector<std::string> words_;
  int nearest_below_ = -1, nearest_above_ = -1;
};

}  // namespace

std::string filler_text(uint64_t seed, size_t words) {
  const auto w = filler_words(seed, words);
  return join_words(w, w.size());
}

uint64_t filler_seed(int case_seed, size_t index) {
  SplitMix64 mix(static_cast<uint64_t>(static_cast<uint32_t>(case_seed)) * 0x9e3779b97f4a7c15ull + index);
  return mix.next();
}

std::vector<Prompt> synthetic_prompts(int count) {
  std::vector<Prompt> out;
  for (int i = 1; i <= count; ++i) {
    char id[32];
    std::snprintf(id, sizeof id, "synthetic-%02d", i);
    out.push_back(Prompt{id, {{"user", ""}}});
  }
  return out;
}

Result<Prompt> fit_prompt(const Prompt& base, int tokens, const TokenCounter& count, uint64_t seed) {
  if (base.messages.empty()) return make_error("prompt " + base.id + ": has no message to fill");
  return Fitter(base, tokens, count, seed).run();
}

}  // namespace fp

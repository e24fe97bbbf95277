#include "support/support_table.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "util/format_number.h"
#include "util/text.h"

namespace fp {
namespace {

// Columns padded to their widest cell, two spaces apart; the last column unpadded.
std::string aligned_rows(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); ++c) {
      if (width.size() <= c) width.resize(c + 1, 0);
      width[c] = std::max(width[c], r[c].size());
    }
  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); ++c) {
      line += r[c];
      if (c + 1 < r.size()) line += std::string(width[c] - r[c].size() + 2, ' ');
    }
    out += line + "\n";
  }
  return out;
}

std::string support_answer_text(const SupportRun& run, size_t q, size_t d) {
  const Answer a = run.reply.answers.answers[q][d];
  std::string t = answer_name(a);
  if ((a == Answer::Refused || a == Answer::Error) && !run.reply.answers.why[q].empty()) t += ": " + run.reply.answers.why[q];
  if (a == Answer::Yes || a == Answer::No)
    if (!run.reply.answers.cache_fits[q][d]) t += "; the KV cache tensor itself: no (with the cache on this device llama.cpp aborts at start)";
  return t;
}

// "a, b and c" for a list of labels, "every X" when it holds all of `all`.
std::string support_folded(const std::vector<std::string>& have, const std::vector<std::string>& all, const std::string& what) {
  if (have.size() == all.size() && all.size() > 1) return "every " + what;
  return what + " " + join(have, ", ");
}

}  // namespace

std::string support_rows_text(const SupportRun& run) {
  std::vector<std::vector<std::string>> rows = {
      {"model", "head K/V", "heads/KV", "kv (K/V)", "kv length", "batch", "device", "supported"}};
  const auto& devs = run.reply.answers.devices;
  for (size_t q = 0; q < run.plan.queries.size(); ++q) {
    const SupportQuery& sq = run.plan.queries[q];
    const AttentionShape& s = run.plan.shapes[sq.shape];
    for (size_t d = 0; d < devs.size(); ++d)
      rows.push_back({s.name, s.head_label(), s.heads_label(), sq.kv.label(), std::to_string(sq.kv_length), sq.batch.label(),
                      devs[d].name, support_answer_text(run, q, d)});
  }
  return aligned_rows(rows);
}

std::string support_summary_text(const SupportRun& run) {
  std::string out;
  const auto& a = run.reply.answers;
  for (size_t d = 0; d < a.devices.size(); ++d) {
    size_t yes = 0;
    for (size_t q = 0; q < run.plan.queries.size(); ++q) yes += a.answers[q][d] == Answer::Yes;
    out += a.devices[d].name + ": supported " + std::to_string(yes) + " of " + std::to_string(run.plan.queries.size()) + "\n";
    // The rows not "yes", per shape: folded into the sets of pairs, lengths and batches when they are
    // every combination of those, else listed one by one.
    for (size_t s = 0; s < run.plan.shapes.size(); ++s) {
      std::vector<size_t> rows, all;
      for (size_t q = 0; q < run.plan.queries.size(); ++q) {
        if (run.plan.queries[q].shape != s) continue;
        all.push_back(q);
        if (a.answers[q][d] != Answer::Yes) rows.push_back(q);
      }
      if (rows.empty()) continue;
      // answer -> the K/V pairs it holds for -> their lengths and batches; pairs with the same lengths
      // and batches share a line.
      std::map<std::string, std::map<std::string, std::vector<size_t>>> by_answer;
      std::vector<std::string> kv_order;
      for (size_t q : all) {
        const std::string kv = run.plan.queries[q].kv.label();
        if (std::find(kv_order.begin(), kv_order.end(), kv) == kv_order.end()) kv_order.push_back(kv);
      }
      for (size_t q : rows) by_answer[support_answer_text(run, q, d)][run.plan.queries[q].kv.label()].push_back(q);
      std::vector<std::string> all_lengths, all_batches;
      auto add = [](std::vector<std::string>& v, const std::string& x) {
        if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
      };
      for (size_t q : all) {
        add(all_lengths, std::to_string(run.plan.queries[q].kv_length));
        add(all_batches, run.plan.queries[q].batch.label());
      }
      const std::string shape =
          "  " + run.plan.shapes[s].name + " (" + run.plan.shapes[s].head_label() + ", " + run.plan.shapes[s].heads_label() + " heads): ";
      for (const auto& [answer, per_kv] : by_answer) {
        std::vector<std::pair<std::string, std::vector<std::string>>> folds;  // fold text -> kv pairs
        for (const std::string& kv : kv_order) {
          auto it = per_kv.find(kv);
          if (it == per_kv.end()) continue;
          std::vector<std::string> lengths, batches;
          for (size_t q : it->second) {
            add(lengths, std::to_string(run.plan.queries[q].kv_length));
            add(batches, run.plan.queries[q].batch.label());
          }
          std::string fold;
          if (it->second.size() == lengths.size() * batches.size()) {
            fold = support_folded(lengths, all_lengths, "kv length") + "; " + support_folded(batches, all_batches, "batch");
          } else {
            std::vector<std::string> each;
            for (size_t q : it->second)
              each.push_back("kv length " + std::to_string(run.plan.queries[q].kv_length) + " batch " + run.plan.queries[q].batch.label());
            fold = join(each, ", ");
          }
          auto f = std::find_if(folds.begin(), folds.end(), [&](const auto& x) { return x.first == fold; });
          if (f == folds.end()) folds.push_back({fold, {kv}});
          else f->second.push_back(kv);
        }
        for (const auto& [fold, kvs] : folds)
          out += shape + answer + " for " + support_folded(kvs, kv_order, "kv") + "; " + fold + "\n";
      }
    }
  }
  return out;
}

std::string support_text(const SupportRun& run) {
  const auto& a = run.reply.answers;
  std::ostringstream out;
  out << "ggml " << a.ggml_version << " (commit " << a.ggml_commit << "): " << run.libggml << "\n";
  out << "runtime: " << run.runtime_how_found << "\n";
  for (const auto& d : a.devices)
    out << "device " << d.index << ": " << d.name << " (" << d.backend << ", " << d.type << ": " << d.description << ")\n";
  for (const auto& s : run.sources) out << "shapes: " << s << "\n";
  out << "asked: " << run.plan.queries.size() << " FLASH_ATTN_EXT node(s) x " << a.devices.size() << " device(s) in "
      << (a.queries_us >= 0 ? fixed(a.queries_us / 1000.0, 1) + " ms" : std::string("(unknown)")) << "; the helper took "
      << fixed(run.reply.wall_s, 2) << " s with loading ggml and its backends\n\n";
  out << support_rows_text(run) << "\n";
  out << "summary\n" << support_summary_text(run);
  std::vector<std::string> notes = run.notes;
  notes.insert(notes.end(), run.plan.notes.begin(), run.plan.notes.end());
  if (!notes.empty()) out << "\nnotes\n";
  for (const auto& n : notes) out << "  " << n << "\n";
  return out.str();
}

nlohmann::json support_json(const SupportRun& run) {
  using nlohmann::json;
  const auto& a = run.reply.answers;
  json j;
  j["ggml"] = {{"version", a.ggml_version}, {"commit", a.ggml_commit}, {"library", run.libggml}};
  j["runtime"] = run.runtime_how_found;
  j["helper"] = run.reply.argv;
  j["devices"] = json::array();
  for (const auto& d : a.devices)
    j["devices"].push_back({{"index", d.index}, {"name", d.name}, {"backend", d.backend}, {"type", d.type}, {"description", d.description}});
  j["shapes"] = json::array();
  for (const auto& s : run.plan.shapes)
    j["shapes"].push_back({{"name", s.name}, {"source", s.source}, {"architecture", s.architecture}, {"layers", s.layers},
                           {"n_embd", s.n_embd}, {"n_ff", s.n_ff}, {"trained_context", s.trained_context}, {"n_head", s.n_head},
                           {"n_head_kv", s.n_head_kv}, {"head_k", s.head_k}, {"head_v", s.head_v}, {"mla", s.v_is_k_view},
                           {"scale", s.scale}, {"logit_softcap", s.logit_softcap}, {"max_bias", s.max_bias}});
  j["rows"] = json::array();
  for (size_t q = 0; q < run.plan.queries.size(); ++q) {
    const SupportQuery& sq = run.plan.queries[q];
    json answers = json::object();
    json cache = json::object();
    for (size_t d = 0; d < a.devices.size(); ++d) {
      answers[a.devices[d].name] = answer_name(a.answers[q][d]);
      cache[a.devices[d].name] = static_cast<bool>(a.cache_fits[q][d]);
    }
    json row = {{"model", run.plan.shapes[sq.shape].name}, {"kv_k", sq.kv.k}, {"kv_v", sq.kv.v}, {"node_k", sq.node.k},
                {"node_v", sq.node.v}, {"kv_length", sq.kv_length}, {"batch", sq.batch.tokens}, {"streams", sq.batch.streams},
                {"answers", answers}, {"cache_fits", cache}};
    if (!a.why[q].empty()) row["why"] = a.why[q];
    j["rows"].push_back(row);
  }
  j["queries_us"] = a.queries_us;
  j["helper_wall_s"] = run.reply.wall_s;
  j["sources"] = run.sources;
  std::vector<std::string> notes = run.notes;
  notes.insert(notes.end(), run.plan.notes.begin(), run.plan.notes.end());
  j["notes"] = notes;
  return j;
}

}  // namespace fp

#include "support/support_plan.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "util/text.h"

namespace fp {
namespace {

bool support_same_query(const SupportQuery& a, const SupportQuery& b) {
  return a.shape == b.shape && a.kv == b.kv && a.kv_length == b.kv_length && a.batch == b.batch;
}

std::string support_query_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::vector<std::string> support_tab_fields(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

bool support_whole(const std::string& s, long long& out) {
  char* end = nullptr;
  out = std::strtoll(s.c_str(), &end, 10);
  return !s.empty() && !*end;
}

}  // namespace

std::string StepBatch::label() const {
  return std::to_string(tokens) + (streams > 1 ? " (" + std::to_string(streams) + " streams)" : "");
}

SupportPlan plan_support(const std::vector<AttentionShape>& shapes, const std::vector<KvPair>& pairs,
                         const std::vector<int>& kv_lengths, const std::vector<StepBatch>& batches,
                         const std::string& f32_cast_to) {
  SupportPlan plan;
  plan.shapes = shapes;
  for (size_t s = 0; s < shapes.size(); ++s) {
    bool noted = false;
    for (const KvPair& asked : pairs) {
      KvPair kv = asked;
      if (shapes[s].v_is_k_view && kv.k != kv.v) {
        if (!noted)
          plan.notes.push_back(shapes[s].name + ": a K-only cache (MLA) has one type, V is a view of K: mixed pairs are asked "
                               "with their K type");
        noted = true;
        kv.v = kv.k;
      }
      KvPair node = kv;
      if (!f32_cast_to.empty()) {
        if (node.k == "f32") node.k = f32_cast_to;
        if (node.v == "f32") node.v = f32_cast_to;
      }
      for (int length : kv_lengths)
        for (const StepBatch& b : batches) {
          SupportQuery q{s, kv, node, length, b};
          if (std::none_of(plan.queries.begin(), plan.queries.end(), [&](const SupportQuery& o) { return support_same_query(o, q); }))
            plan.queries.push_back(q);
        }
    }
  }
  return plan;
}

void append_plan(SupportPlan& into, const SupportPlan& more) {
  const size_t base = into.shapes.size();
  into.shapes.insert(into.shapes.end(), more.shapes.begin(), more.shapes.end());
  for (SupportQuery q : more.queries) {
    q.shape += base;
    into.queries.push_back(q);
  }
  into.notes.insert(into.notes.end(), more.notes.begin(), more.notes.end());
}

std::string query_lines(const SupportPlan& plan) {
  std::string out = "# ID HEAD_K HEAD_V N_HEAD N_HEAD_KV N_KV N_TOKENS N_STREAM K_TYPE V_TYPE V_IS_K_VIEW SCALE MAX_BIAS SOFTCAP\n";
  for (size_t i = 0; i < plan.queries.size(); ++i) {
    const SupportQuery& q = plan.queries[i];
    const AttentionShape& s = plan.shapes[q.shape];
    std::ostringstream line;
    line << i << ' ' << s.head_k << ' ' << s.head_v << ' ' << s.n_head << ' ' << s.n_head_kv << ' ' << q.kv_length << ' '
         << q.batch.tokens << ' ' << q.batch.streams << ' ' << q.node.k << ' ' << q.node.v << ' ' << (s.v_is_k_view ? 1 : 0)
         << ' ' << support_query_number(s.scale) << ' ' << support_query_number(s.max_bias) << ' ' << support_query_number(s.logit_softcap) << '\n';
    out += line.str();
  }
  return out;
}

const char* answer_name(Answer a) {
  switch (a) {
    case Answer::Yes: return "yes";
    case Answer::No: return "no";
    case Answer::Refused: return "refused";
    case Answer::Error: return "error";
    case Answer::Missing: return "missing";
  }
  return "missing";
}

Result<SupportAnswers> parse_answers(const std::string& text, size_t n_queries, const std::string& path) {
  SupportAnswers a;
  a.why.assign(n_queries, "");
  std::vector<std::vector<Answer>> per_query(n_queries);
  std::vector<Answer> whole_query(n_queries, Answer::Missing);  // refused / error: every device
  std::vector<std::set<size_t>> cache_refused(n_queries);        // devices that do not take the cache
  size_t line_no = 0;
  for (const std::string& line : split_lines(text)) {
    ++line_no;
    if (line.empty()) continue;
    const auto f = support_tab_fields(line);
    auto bad = [&](const std::string& why) {
      return make_error(path + ": line " + std::to_string(line_no) + ": " + why + ": " + quote(line));
    };
    long long id = -1;
    if (f[0] == "ggml" && f.size() == 3) {
      a.ggml_version = f[1];
      a.ggml_commit = f[2];
    } else if (f[0] == "device" && f.size() == 6) {
      long long index = 0;
      if (!support_whole(f[1], index) || index != static_cast<long long>(a.devices.size())) return bad("device index out of order");
      a.devices.push_back({static_cast<int>(index), f[2], f[3], f[4], f[5]});
    } else if (f[0] == "answer" && f.size() == 4) {
      long long dev = 0;
      if (!support_whole(f[1], id) || id < 0 || static_cast<size_t>(id) >= n_queries) return bad("unknown query id");
      if (!support_whole(f[2], dev) || dev < 0 || static_cast<size_t>(dev) >= a.devices.size()) return bad("unknown device");
      if (f[3] != "yes" && f[3] != "no") return bad("expected yes or no");
      auto& row = per_query[id];
      if (row.size() <= static_cast<size_t>(dev)) row.resize(dev + 1, Answer::Missing);
      row[dev] = f[3] == "yes" ? Answer::Yes : Answer::No;
    } else if (f[0] == "cache" && f.size() == 4) {
      long long dev = 0;
      if (!support_whole(f[1], id) || id < 0 || static_cast<size_t>(id) >= n_queries) return bad("unknown query id");
      if (!support_whole(f[2], dev) || dev < 0 || static_cast<size_t>(dev) >= a.devices.size()) return bad("unknown device");
      if (f[3] != "yes" && f[3] != "no") return bad("expected yes or no");
      if (f[3] == "no") cache_refused[id].insert(static_cast<size_t>(dev));
    } else if ((f[0] == "refused" || f[0] == "error") && f.size() == 3) {
      if (!support_whole(f[1], id) || id < 0 || static_cast<size_t>(id) >= n_queries) return bad("unknown query id");
      whole_query[id] = f[0] == "refused" ? Answer::Refused : Answer::Error;
      a.why[id] = f[2];
    } else if (f[0] == "done" && f.size() == 3) {
      long long n = 0, us = 0;
      if (!support_whole(f[1], n) || !support_whole(f[2], us)) return bad("expected counts");
      a.queries_us = us;
    } else if (f[0] == "fatal" && f.size() == 2) {
      a.fatal = f[1];
    } else {
      return bad("not a line of the ggml query helper");
    }
  }
  a.answers.assign(n_queries, std::vector<Answer>(a.devices.size(), Answer::Missing));
  a.cache_fits.assign(n_queries, std::vector<bool>(a.devices.size(), true));
  for (size_t q = 0; q < n_queries; ++q)
    for (size_t d : cache_refused[q]) a.cache_fits[q][d] = false;
  for (size_t q = 0; q < n_queries; ++q)
    for (size_t d = 0; d < a.devices.size(); ++d)
      a.answers[q][d] = whole_query[q] != Answer::Missing ? whole_query[q]
                        : d < per_query[q].size()        ? per_query[q][d]
                                                         : Answer::Missing;
  return a;
}

}  // namespace fp

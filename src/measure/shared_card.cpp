#include "measure/shared_card.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "util/text.h"

namespace fp {
namespace {

// The places that hold the cache: the runtime's KV buffer lines, else where free memory was read, else the CPU.
std::set<std::string> cache_devices(const HeadroomInput& in) {
  std::set<std::string> out;
  for (const auto& [d, mib] : in.kv_mib_by_device) out.insert(d);
  if (out.empty())
    for (const FreeOn& f : in.free) out.insert(f.device);
  if (out.empty()) out.insert("CPU");
  return out;
}

std::string process_text(const OtherProcess& p) {
  std::string s = "pid " + std::to_string(p.pid) + " " + (p.command.empty() ? "(not visible here: another pid namespace?)" : p.command);
  return s + (p.mib ? ", " + mib_text(*p.mib) + " MiB" : ", memory not known");
}

// Takes the processes of `on` that match `n` for it; fills its outcome.
NeighbourOutcome find_neighbour(const Neighbour& n, OthersOn* on, bool holds_cache) {
  NeighbourOutcome out;
  out.declared = n;
  if (!holds_cache) {
    out.state = NeighbourState::Elsewhere;
    out.looked = n.device + " holds none of this case's KV cache";
    return out;
  }
  const std::string where = on ? on->where : n.device;
  if (on) {
    double used = 0;
    bool known = true;
    for (OtherProcess& p : on->processes) {
      if (!p.neighbour.empty() || !matches_process(p, n.match)) continue;
      p.neighbour = n.name;
      out.processes.push_back(p);
      if (p.mib) used += *p.mib;
      else known = false;
    }
    if (!out.processes.empty()) {
      out.state = NeighbourState::Running;
      if (known) {
        out.used_mib = used;
        out.reserved_mib = std::max(0.0, n.mib - used);
      }
      out.looked = on->listed ? "found among the processes NVML lists on " + where : "found among the processes of " + where;
      return out;
    }
  }
  out.state = NeighbourState::NotRunning;
  out.reserved_mib = n.mib;
  if (!on) out.looked = "nothing was read on " + n.device;
  else if (on->listed) out.looked = "no process NVML lists on " + where + " matches " + quote(n.match);
  else if (on->why_not.empty() || on->device == "CPU") out.looked = "no process of " + where + " matches " + quote(n.match);
  else out.looked = "not looked for: " + on->why_not;
  return out;
}

// Who shares the places holding the cache, in words: the neighbours, then the unnamed processes.
std::string beside_text(const Headroom& h, const std::string& limited_by) {
  std::vector<std::string> parts;
  for (const NeighbourOutcome& n : h.neighbours) {
    if (n.state == NeighbourState::Running)
      parts.push_back(n.declared.name + " (running" + (n.used_mib ? ", " + mib_text(*n.used_mib) + " MiB" : std::string()) +
                      (n.reserved_mib > 0 ? ", " + mib_text(n.reserved_mib) + " MiB more reserved" : std::string()) + ")");
    else if (n.state == NeighbourState::NotRunning)
      parts.push_back(n.declared.name + " (not running: " + mib_text(n.reserved_mib) + " MiB reserved)");
  }
  for (const OthersOn& on : h.others) {
    if (!on.listed) continue;  // the host: only the processes that matched a neighbour were read
    std::vector<std::string> unnamed;
    double mib = 0;
    for (const OtherProcess& p : on.processes)
      if (p.neighbour.empty()) {
        unnamed.push_back(process_text(p));
        mib += p.mib.value_or(0);
      }
    if (unnamed.empty()) continue;
    const size_t shown = std::min<size_t>(unnamed.size(), 3);
    std::string s = std::to_string(unnamed.size()) + " other process" + (unnamed.size() > 1 ? "es" : "") + " on " + on.where + " [" +
                    join(std::vector<std::string>(unnamed.begin(), unnamed.begin() + static_cast<long>(shown)), "; ");
    if (shown < unnamed.size()) s += "; " + std::to_string(unnamed.size() - shown) + " more";
    parts.push_back(s + "]");
  }
  if (!parts.empty()) return join(parts, " and ");
  if (limited_by == "CPU") return "the host's other processes (MemAvailable)";
  for (const OthersOn& on : h.others)
    if (on.device == limited_by) return "its own weights and buffers alone on " + on.where;
  return "its own weights and buffers on " + limited_by;
}

}  // namespace

bool matches_process(const OtherProcess& p, const std::string& match) {
  if (match.empty()) return false;
  return p.command == match || p.command_line.find(match) != std::string::npos;
}

void share_card(const HeadroomInput& in, Headroom& h) {
  h.others = in.others;
  h.neighbours.clear();
  const std::set<std::string> devices = cache_devices(in);
  for (const Neighbour& n : in.neighbours) {
    OthersOn* on = nullptr;
    for (OthersOn& o : h.others)
      if (o.device == n.device) on = &o;
    h.neighbours.push_back(find_neighbour(n, on, devices.count(n.device) > 0));
  }
  h.deployed.reset();
  if (!in.check_deployed) return;
  DeployedFit d;
  d.bytes_per_token = h.bytes_per_token;
  d.deployed = in.deployed_context > 0 ? in.deployed_context : h.cells;
  d.deployed_source = in.deployed_context > 0 ? "headroom.deployed_context" : "the cells it ran with: " + h.cells_source;
  std::map<std::string, double> reserved;
  for (const NeighbourOutcome& n : h.neighbours)
    if (n.state != NeighbourState::Elsewhere) reserved[n.declared.device] += n.reserved_mib;
  std::vector<std::pair<std::string, int64_t>> left;
  for (const FreeOn& f : h.free) {
    const double r = reserved.count(f.device) ? reserved[f.device] : 0.0;
    d.reserved_mib += r;
    left.push_back({f.device, static_cast<int64_t>(f.free_bytes) - static_cast<int64_t>(std::llround(r * kBytesPerMiB))});
  }
  const auto fit = h.more_tokens >= 0 ? tokens_fit(left, in.kv_mib_by_device, h.bytes_per_token) : std::nullopt;
  if (!fit) {
    d.not_checked = "no memory left was measured where the cache lives";
    for (const auto& [device, mib] : reserved)
      if (mib > 0 && std::none_of(h.free.begin(), h.free.end(), [&](const FreeOn& f) { return f.device == device; }))
        d.not_checked += "; " + device + " has " + mib_text(mib) + " MiB reserved and no reading";
    h.deployed = d;
    return;
  }
  d.checked = true;
  d.fits = h.cells + fit->tokens;
  d.limited_by = fit->limited_by;
  d.short_by = std::max(0L, d.deployed - d.fits);
  d.beside = beside_text(h, d.limited_by);
  h.deployed = d;
}

}  // namespace fp

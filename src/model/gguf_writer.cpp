#include "model/gguf_writer.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "model/gguf_value_type.h"

namespace fp {
namespace {

constexpr uint64_t kAlignment = 32;

void put_u32(std::string& out, uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }
void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put_str(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

void put_value(std::string& out, const GgufValue& v) {
  struct Visitor {
    std::string& out;
    void operator()(uint32_t x) { put_u32(out, gguf::kU32); put_u32(out, x); }
    void operator()(int32_t x) { put_u32(out, gguf::kI32); out.append(reinterpret_cast<const char*>(&x), 4); }
    void operator()(float x) { put_u32(out, gguf::kF32); out.append(reinterpret_cast<const char*>(&x), 4); }
    void operator()(bool x) { put_u32(out, gguf::kBool); out += static_cast<char>(x ? 1 : 0); }
    void operator()(const std::string& s) { put_u32(out, gguf::kString); put_str(out, s); }
    void operator()(const std::vector<std::string>& a) {
      put_u32(out, gguf::kArray); put_u32(out, gguf::kString); put_u64(out, a.size());
      for (const auto& s : a) put_str(out, s);
    }
    void operator()(const std::vector<float>& a) {
      put_u32(out, gguf::kArray); put_u32(out, gguf::kF32); put_u64(out, a.size());
      out.append(reinterpret_cast<const char*>(a.data()), a.size() * 4);
    }
    void operator()(const std::vector<int32_t>& a) {
      put_u32(out, gguf::kArray); put_u32(out, gguf::kI32); put_u64(out, a.size());
      out.append(reinterpret_cast<const char*>(a.data()), a.size() * 4);
    }
  };
  std::visit(Visitor{out}, v);
}

uint64_t align_up(uint64_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// One piece of work: rows [begin, end) of one tensor.
struct Chunk {
  size_t tensor;
  uint64_t begin, end;
  bool last;  // the tensor's last chunk: the padding to the alignment follows it
};

}  // namespace

uint64_t GgufWriter::Tensor::rows() const {
  uint64_t r = 1;
  for (size_t i = 1; i < dims.size(); ++i) r *= dims[i];
  return r;
}
uint64_t GgufWriter::Tensor::row_bytes() const { return encoded_row_bytes(type, dims.empty() ? 0 : dims[0]); }

void GgufWriter::add_kv(std::string key, GgufValue value) { kvs_.emplace_back(std::move(key), std::move(value)); }

void GgufWriter::add_tensor(std::string name, std::vector<uint64_t> dims, WeightType type, GgufRowFill fill) {
  tensors_.push_back({std::move(name), std::move(dims), type, std::move(fill)});
}

void GgufWriter::add_tensor(std::string name, std::vector<uint64_t> dims, WeightType type, std::string data) {
  const uint64_t row_bytes = encoded_row_bytes(type, dims.empty() ? 0 : dims[0]);
  auto bytes = std::make_shared<const std::string>(std::move(data));
  add_tensor(std::move(name), std::move(dims), type, [bytes, row_bytes](uint64_t begin, uint64_t end, unsigned char* out) {
    std::memcpy(out, bytes->data() + begin * row_bytes, (end - begin) * row_bytes);
  });
}

std::string GgufWriter::header() const {
  std::string out;
  out += "GGUF";
  put_u32(out, 3);
  put_u64(out, tensors_.size());
  put_u64(out, kvs_.size());
  for (const auto& [k, v] : kvs_) {
    put_str(out, k);
    put_value(out, v);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    put_str(out, t.name);
    put_u32(out, static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) put_u64(out, d);
    put_u32(out, weight_encoding(t.type).ggml_type);
    put_u64(out, offset);
    offset = align_up(offset + t.bytes());
  }
  out.resize(align_up(out.size()), '\0');
  return out;
}

uint64_t GgufWriter::file_size() const {
  uint64_t n = header().size();
  for (const auto& t : tensors_) n = align_up(n + t.bytes());
  return n;
}

bool GgufWriter::write(const std::function<bool(std::string_view)>& sink, unsigned threads) const {
  if (!sink(header())) return false;
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const Tensor& t = tensors_[i];
    const uint64_t rows = t.rows(), step = std::max<uint64_t>(1, kChunkBytes / std::max<uint64_t>(1, t.row_bytes()));
    for (uint64_t r = 0; r < rows; r += step) chunks.push_back({i, r, std::min(rows, r + step), r + step >= rows});
  }
  threads = std::max(1u, threads);
  const size_t window = std::max<size_t>(1, std::min<size_t>(2 * threads, kMaxBytesInFlight / kChunkBytes));
  std::vector<std::string> slot(window);
  std::vector<long long> ready(window, -1);  // which chunk a slot holds, -1 none
  std::mutex m;
  std::condition_variable cv;
  size_t written = 0;  // chunks handed to the sink
  bool stop = false;
  std::atomic<size_t> next{0};

  auto work = [&] {
    for (;;) {
      const size_t j = next.fetch_add(1);
      if (j >= chunks.size()) return;
      {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return stop || j < written + window; });
        if (stop) return;
      }
      const Chunk& c = chunks[j];
      const Tensor& t = tensors_[c.tensor];
      std::string& buf = slot[j % window];  // only this worker touches it until it is marked ready
      buf.assign((c.end - c.begin) * t.row_bytes(), '\0');
      t.fill(c.begin, c.end, reinterpret_cast<unsigned char*>(buf.data()));
      {
        std::lock_guard lock(m);
        ready[j % window] = static_cast<long long>(j);
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < threads; ++i) pool.emplace_back(work);

  bool ok = true;
  uint64_t pos = header().size();
  for (size_t j = 0; j < chunks.size() && ok; ++j) {
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return ready[j % window] == static_cast<long long>(j); });
    }
    std::string& buf = slot[j % window];
    ok = sink(buf);
    pos += buf.size();
    if (ok && chunks[j].last) {
      const uint64_t pad = align_up(pos) - pos;
      if (pad) ok = sink(std::string(pad, '\0'));
      pos += pad;
    }
    std::string().swap(buf);
    {
      std::lock_guard lock(m);
      ready[j % window] = -1;
      written = j + 1;
      if (!ok) stop = true;
    }
    cv.notify_all();
  }
  {
    std::lock_guard lock(m);
    stop = true;
  }
  cv.notify_all();
  for (auto& th : pool) th.join();
  return ok;
}

std::string GgufWriter::serialize() const {
  std::string out;
  write(
      [&](std::string_view b) {
        out.append(b);
        return true;
      },
      1);
  return out;
}

}  // namespace fp

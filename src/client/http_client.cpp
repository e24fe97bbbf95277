#include "client/http_client.h"

#include <cstdio>

#include "client/curl_handle.h"

namespace fp {
namespace {

struct Sink {
  std::string body;
  size_t max = 0;
  bool overflow = false;
};

size_t write_body(char* ptr, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  size_t len = size * n;
  if (sink->body.size() + len > sink->max) {
    sink->overflow = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  sink->body.append(ptr, len);
  return len;
}

Result<HttpResponse> perform(const char* method, const std::string& url, const std::string* post_body,
                             double timeout_s, size_t max_body_bytes, const std::vector<std::string>& extra_headers = {}) {
  char errbuf[CURL_ERROR_SIZE];
  FP_TRY(CurlEasy easy, make_curl_easy(url, timeout_s, errbuf));
  CURL* c = easy.get();
  Sink sink;
  sink.max = max_body_bytes;
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  CurlHeaders headers;
  if (post_body) headers = json_post_headers();
  for (const auto& h : extra_headers) headers.reset(curl_slist_append(headers.release(), h.c_str()));
  if (headers) curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (post_body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, post_body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(post_body->size()));
  }
  CURLcode rc = curl_easy_perform(c);
  std::string what = std::string(method) + " " + url;
  if (sink.overflow) {
    return make_error(what + ": response body exceeds the limit of " + std::to_string(max_body_bytes) +
                      " bytes");
  }
  if (rc != CURLE_OK) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    return make_error(what + ": " + curl_message(rc, errbuf) + " (timeout " + limit + " s)");
  }
  HttpResponse resp;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp.status);
  resp.body = std::move(sink.body);
  return resp;
}

}  // namespace

Result<HttpResponse> http_get(const std::string& url, double timeout_s, size_t max_body_bytes,
                              const std::vector<std::string>& headers) {
  return perform("GET", url, nullptr, timeout_s, max_body_bytes, headers);
}

Result<HttpResponse> http_post_json(const std::string& url, const std::string& body, double timeout_s,
                                    size_t max_body_bytes, const std::vector<std::string>& headers) {
  return perform("POST", url, &body, timeout_s, max_body_bytes, headers);
}

}  // namespace fp

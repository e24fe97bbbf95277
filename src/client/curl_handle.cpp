#include "client/curl_handle.h"

#include <algorithm>
#include <mutex>

namespace fp {

void curl_global_once() {
  static std::once_flag flag;
  std::call_once(flag, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<CurlEasy> make_curl_easy(const std::string& url, double timeout_s, char* error_buffer) {
  curl_global_once();
  CurlEasy easy(curl_easy_init());
  if (!easy) return make_error("curl_easy_init failed for " + url);
  CURL* c = easy.get();
  error_buffer[0] = '\0';
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_NOPROXY, "*");  // loopback runtimes only: never through a proxy
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  double connect_s = timeout_s > 0 ? std::min(timeout_s, kConnectTimeoutS) : kConnectTimeoutS;
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_s * 1000));
  if (timeout_s > 0) curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  return easy;
}

CurlHeaders json_post_headers() {
  curl_slist* h = curl_slist_append(nullptr, "Content-Type: application/json");
  h = curl_slist_append(h, "Expect:");
  return CurlHeaders(h);
}

std::string curl_message(CURLcode code, const char* error_buffer) {
  if (error_buffer && error_buffer[0]) return error_buffer;
  return curl_easy_strerror(code);
}

}  // namespace fp

// libcurl set-up shared by the clients in src/client: one global init, owned handles, and the
// options every request gets (no signals, never a proxy, connect and total timeouts).
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

#include "util/result.h"

namespace fp {

// curl_global_init, exactly once per process (thread-safe).
void curl_global_once();

struct CurlEasyDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct CurlSlistDeleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};
using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlHeaders = std::unique_ptr<curl_slist, CurlSlistDeleter>;

// Connect timeout used for every request: the smaller of this and the request's own timeout.
constexpr double kConnectTimeoutS = 10.0;

// A new easy handle for `url` with the common options; `error_buffer` (CURL_ERROR_SIZE bytes)
// must outlive the handle. timeout_s <= 0 means no total timeout.
Result<CurlEasy> make_curl_easy(const std::string& url, double timeout_s, char* error_buffer);

// Headers for a JSON POST: Content-Type application/json, and no `Expect: 100-continue` wait.
CurlHeaders json_post_headers();

// curl's own message for a failed transfer: the error buffer when filled, else curl_easy_strerror.
std::string curl_message(CURLcode code, const char* error_buffer);

}  // namespace fp

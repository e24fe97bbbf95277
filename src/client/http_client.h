// One-shot HTTP requests (health checks, model lists, non-streamed answers) over libcurl.
// A non-2xx status is a value, not an error: the caller decides (e.g. 503 while loading).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "util/result.h"

namespace fp {

struct HttpResponse {
  long status = 0;
  std::string body;
};

constexpr size_t kDefaultMaxBodyBytes = size_t{16} << 20;

// GET url within timeout_s seconds. Errors (connect, timeout, body over max_body_bytes) name the
// URL and curl's message.
Result<HttpResponse> http_get(const std::string& url, double timeout_s,
                              size_t max_body_bytes = kDefaultMaxBodyBytes, const std::vector<std::string>& headers = {});

// POST body as application/json; same rules as http_get.
Result<HttpResponse> http_post_json(const std::string& url, const std::string& body, double timeout_s,
                                    size_t max_body_bytes = kDefaultMaxBodyBytes, const std::vector<std::string>& headers = {});

}  // namespace fp

package io.attn.server;

/**
 * An error answered to a client: the HTTP status and the JSON body {@code {"error": {"message", "type", "code"}}} that
 * OpenAI-style clients parse. {@code type} follows OpenAI's names ({@code invalid_request_error}, {@code
 * authentication_error}, {@code rate_limit_error}, {@code server_error}); {@code code} is a stable machine-readable
 * name. Messages are one line, never a stack trace, and never echo a request body. Immutable.
 */
final class ApiError extends RuntimeException {
    final int status;
    final String type, code;

    ApiError(int status, String type, String code, String message) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.code = code;
    }

    static ApiError badRequest(String code, String message) {
        return new ApiError(400, "invalid_request_error", code, message);
    }

    static ApiError tooLarge(String code, String message) {
        return new ApiError(413, "invalid_request_error", code, message);
    }

    static ApiError unavailable(String code, String message) {
        return new ApiError(503, "server_error", code, message);
    }

    String json() {
        return "{\"error\":{\"message\":" + JsonOut.string(getMessage()) + ",\"type\":" + JsonOut.string(type)
                + ",\"code\":" + JsonOut.string(code) + "}}";
    }
}

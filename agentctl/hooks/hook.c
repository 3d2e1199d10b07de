/* agentctl's hook, compiled: the same job as hook.py at a fraction of its start (the CLI starts
 * it twice per tool call). `hook AGENT --socket S --attempt A --key K [--event NAME]`.
 *
 * It parses no JSON: it forwards the CLI's input (stripped, its newlines made spaces) inside a
 * request marked "native", and the attempt answers with what hook.py would have printed, framed
 * as `CODE OUT ERR\n` (decimal exit code and byte counts) and then those bytes. It fails
 * closed: any error is one `agentctl: denied: ...` line on stderr, nothing on stdout, exit 2.
 * POSIX C99, no dependencies; built on first use (agentctl/execution/agents/hook_binary.py).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_MESSAGE_BYTES (16 * 1024 * 1024) /* wire.MAX_MESSAGE_BYTES */
#define MAX_ERR_BYTES 4096                   /* one denied line: its reason is cut at 500 */
#ifndef CONNECT_SECONDS /* -D for a test that waits less */
#define CONNECT_SECONDS 10
#endif
#ifndef REPLY_SECONDS
#define REPLY_SECONDS 3600 /* an `ask` rule waits for a person at the attempt's terminal */
#endif

static const char *const AGENTS[] = {"claude", "codex", "copilot", "gemini", NULL};
static const char *const DENIED = "agentctl: denied: ";

static int deny(const char *reason, const char *detail) {
    fprintf(stderr, "%s%s%s\n", DENIED, reason, detail ? detail : "");
    return 2;
}

/* What an argument may hold: it goes into the request's JSON strings unescaped. */
static int safe(const char *text) {
    const char *c;
    if (!*text) return 0;
    for (c = text; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
              || strchr("_./-+:@,=~%", *c)))
            return 0;
    }
    return 1;
}

static int identifier(const char *text) {
    const char *c;
    if (!*text || (*text >= '0' && *text <= '9')) return 0;
    for (c = text; *c; c++) {
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')
              || *c == '_'))
            return 0;
    }
    return 1;
}

static int json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* Decimal digits up to `stop` at *at (at most 9 of them); -1 when there are none. */
static long number(const char *data, size_t size, size_t *at, char stop) {
    long value = 0;
    size_t start = *at;
    while (*at < size && data[*at] >= '0' && data[*at] <= '9' && *at - start < 9)
        value = value * 10 + (data[(*at)++] - '0');
    if (*at == start || *at >= size || data[*at] != stop) return -1;
    (*at)++;
    return value;
}

static int write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t done = write(fd, data, size);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return -1;
        data += done;
        size -= (size_t)done;
    }
    return 0;
}

static char *append(char *at, const char *text) {
    size_t size = strlen(text);
    memcpy(at, text, size);
    return at + size;
}

int main(int argc, char **argv) {
    const char *agent, *path = NULL, *attempt = NULL, *key = NULL, *event = NULL;
    char *input, *request, *at, *reply;
    size_t size = 0, start, end, i, got = 0, need = 0, header = 0;
    long code = -1, out = 0, err = 0;
    ssize_t n;
    int known = 0, connection;
    struct sockaddr_un address;
    struct timeval wait;

    signal(SIGPIPE, SIG_IGN);
    for (i = 0; argc > 1 && AGENTS[i]; i++) known |= strcmp(argv[1], AGENTS[i]) == 0;
    if (!known)
        return deny("usage: agentctl hook claude|codex|copilot|gemini --socket PATH --attempt ID "
                    "--key KEY", NULL);
    agent = argv[1];
    for (i = 2; i < (size_t)argc; i += 2) {
        const char **slot = strcmp(argv[i], "--socket") == 0    ? &path
                            : strcmp(argv[i], "--attempt") == 0 ? &attempt
                            : strcmp(argv[i], "--key") == 0     ? &key
                            : strcmp(argv[i], "--event") == 0   ? &event
                                                                : NULL;
        if (!slot || i + 1 >= (size_t)argc)
            return deny("unexpected hook argument; expected --socket, --attempt and --key with "
                        "values (and --event NAME)", NULL);
        *slot = argv[i + 1];
    }
    if (event && !identifier(event)) return deny("--event is not an event name", NULL);
    if (!path || !*path || !attempt || !*attempt || !key || !*key)
        return deny("no run to check this call against: missing --socket, --attempt or --key "
                    "(the hook only works inside an agentctl run)", NULL);
    if (!safe(path) || !safe(attempt) || !safe(key))
        return deny("a hook argument holds a character the native hook does not pass on", NULL);
    if (strlen(path) >= sizeof(address.sun_path))
        return deny("the attempt's socket path is too long: ", path);

    input = malloc(MAX_MESSAGE_BYTES + 1);
    if (!input) return deny("internal error: out of memory", NULL);
    while (size <= MAX_MESSAGE_BYTES) {
        n = read(0, input + size, MAX_MESSAGE_BYTES + 1 - size);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return deny("cannot read the hook input: ", strerror(errno));
        if (n == 0) break;
        size += (size_t)n;
    }
    if (size > MAX_MESSAGE_BYTES) return deny("hook input is too large", NULL);
    for (start = 0; start < size && json_space(input[start]); start++) {}
    for (end = size; end > start && json_space(input[end - 1]); end--) {}
    if (end == start || input[start] != '{' || input[end - 1] != '}')
        return deny("hook input is not a JSON object; expected the agent's PreToolUse or "
                    "PostToolUse object on stdin", NULL);
    for (i = start; i < end; i++)
        if (input[i] == '\n' || input[i] == '\r') input[i] = ' ';

    /* the input first: any key it repeats is the request's own field, and refused */
    request = malloc(end - start + strlen(attempt) + strlen(key) + (event ? strlen(event) : 0)
                     + 128);
    if (!request) return deny("internal error: out of memory", NULL);
    at = append(request, "{\"input\":");
    memcpy(at, input + start, end - start);
    at += end - start;
    at = append(at, ",\"native\":true,\"attempt\":\"");
    at = append(at, attempt);
    at = append(at, "\",\"key\":\"");
    at = append(at, key);
    at = append(at, "\",\"agent\":\"");
    at = append(at, agent);
    if (event) {
        at = append(at, "\",\"event\":\"");
        at = append(at, event);
    }
    at = append(at, "\"}\n");

    connection = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connection < 0) return deny("cannot open a socket: ", strerror(errno));
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    strcpy(address.sun_path, path);
    wait.tv_sec = CONNECT_SECONDS;
    wait.tv_usec = 0;
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
    if (connect(connection, (struct sockaddr *)&address, sizeof address) != 0) {
        fprintf(stderr, "%scannot reach the attempt at %s: %s (the run is over or was killed)\n",
                DENIED, path, strerror(errno));
        return 2;
    }
    wait.tv_sec = REPLY_SECONDS;
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    if (write_all(connection, request, (size_t)(at - request)) != 0)
        return deny("the attempt gave no answer: ", strerror(errno));

    reply = input; /* the input is sent: its buffer holds the answer */
    for (;;) {
        if (got >= MAX_MESSAGE_BYTES) return deny("the attempt's answer is too large", NULL);
        n = recv(connection, reply + got, MAX_MESSAGE_BYTES - got, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return deny("the attempt gave no answer: ", strerror(errno));
        if (n == 0) break;
        got += (size_t)n;
        if (!header && memchr(reply, '\n', got)) {
            code = number(reply, got, &header, ' ');
            out = code < 0 ? -1 : number(reply, got, &header, ' ');
            err = out < 0 ? -1 : number(reply, got, &header, '\n');
            if (err < 0 || (code != 0 && code != 2) || err > MAX_ERR_BYTES
                || (size_t)out > MAX_MESSAGE_BYTES)
                return deny("the attempt's answer is not one the hook can read", NULL);
            need = header + (size_t)out + (size_t)err;
        }
        if (header && got >= need) break;
    }
    close(connection);
    if (got == 0) return deny("the attempt gave no answer: it closed the connection", NULL);
    if (!header || got != need)
        return deny("the attempt's answer is not one the hook can read", NULL);
    /* a denial says why in one line; an allowance says nothing there */
    if (code == 2 ? (err <= (long)strlen(DENIED) || memcmp(reply + header + out, DENIED,
                                                           strlen(DENIED)) != 0
                     || memchr(reply + header + out, '\n', (size_t)err - 1) != NULL
                     || reply[need - 1] != '\n')
                  : err != 0)
        return deny("the attempt's answer is not one the hook can read", NULL);
    if (write_all(1, reply + header, (size_t)out) != 0)
        return deny("cannot write the answer: ", strerror(errno));
    if (err && write_all(2, reply + header + out, (size_t)err) != 0) return 2;
    return (int)code;
}

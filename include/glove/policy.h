/* SPDX-License-Identifier: MIT */
#pragma once

/* The policy: what the agent may see and do. Loaded from a JSON file
 * (docs/policy.md), built from the built-in default, and amended by command
 * line flags; all three go through the same glove_policy_add_*() calls, so
 * a flag and the field it stands for are checked identically. Loading is
 * purely lexical: nothing here touches the grant paths. The sandbox resolves
 * and checks them (src/sandbox/sandbox-grants.c). */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum glove_grant_kind {
        GLOVE_GRANT_RO,      /* host path, read-only */
        GLOVE_GRANT_RW,      /* host path, live read-write */
        GLOVE_GRANT_TMPFS,   /* empty private tmpfs, sized */
        GLOVE_GRANT_OVERLAY, /* copy-on-write over a host directory: overlayfs, its upper layer a sized tmpfs */
};

enum glove_net_mode {
        GLOVE_NET_OFFLINE,
        GLOVE_NET_LOOPBACK,
        GLOVE_NET_PROXY, /* loopback plus the audited CONNECT proxy (docs/network.md) */
};

#define GLOVE_POLICY_MAX_ENTRIES 256
#define GLOVE_POLICY_MAX_STRING 4096
#define GLOVE_DEFAULT_TMPFS_SIZE ((uint64_t) 512 << 20)
#define GLOVE_POLICY_MAX_TMPFS_SIZE ((uint64_t) INT64_MAX)
/* An overlay grant's upper layer (docs/policy.md: a working tree and the
 * build output of a typical repository fit; its pages are memory) */
#define GLOVE_DEFAULT_OVERLAY_SIZE ((uint64_t) 1 << 30)
/* identity.uid_when_root "allocated" (the default): each root run takes a
 * host uid of its own (glove_uid_allocate(), glove/sandbox.h) */
#define GLOVE_ROOT_UID_ALLOCATED 0
#define GLOVE_DEFAULT_AUDIT_RAW_MAX 256u
#define GLOVE_POLICY_MAX_AUDIT_RAW ((uint64_t) 64 << 10)
/* audit.rotate_bytes: 1K to 1G (verify reads each file of the log whole) */
#define GLOVE_POLICY_MIN_AUDIT_ROTATE ((uint64_t) 1 << 10)
#define GLOVE_POLICY_MAX_AUDIT_ROTATE ((uint64_t) 1 << 30)

struct glove_grant {
        char *path; /* absolute, normalised, expanded */
        enum glove_grant_kind kind;
        uint64_t size;  /* tmpfs and overlay (its upper layer), bytes */
        bool retained;  /* overlay only: its upper layer is kept as a change set after the run */
        /* "optional": true / --ro-if-exists: a host path that does not
         * exist when the run starts is skipped (and recorded), not fatal */
        bool optional;
        char *origin;   /* where it came from, for messages: "/filesystem/read/2", "--rw", "default" */
};

struct glove_mcp_policy; /* glove/mcp-policy.h */

/* The network section's allow list (proxy mode, docs/network.md). An
 * allow entry is "host:port": a host name (matched exactly, case-
 * insensitively), "*." and a name of at least two labels (any name below
 * it, not the name itself), an IPv4 literal, or an IPv6 literal in
 * brackets ("[::1]:443"); the port 1..65535, decimal, no leading zeros.
 * Never a bare "*", a scheme, a path, user information, a zone id or
 * white space. The proxy reads a request's destination with the same
 * grammar (src/policy/policy-net.c). */
#define GLOVE_NET_HOST_MAX 253
/* "[" v6 "]:" port, or a name and ":65535", with a NUL */
#define GLOVE_NET_DEST_MAX (GLOVE_NET_HOST_MAX + 10)

enum glove_net_host_kind {
        GLOVE_NET_HOST_NAME,
        GLOVE_NET_HOST_WILDCARD, /* host holds the suffix after "*." */
        GLOVE_NET_HOST_IPV4,
        GLOVE_NET_HOST_IPV6,
};

struct glove_net_dest {
        enum glove_net_host_kind kind;
        char host[GLOVE_NET_HOST_MAX + 1]; /* lower-case name, or the address in its canonical text form */
        uint8_t addr[16];                  /* IPv4: the first 4 bytes */
        uint16_t port;
};

/* Parses "host:port" strictly. |wildcard| permits "*.suffix" (allow entries;
 * never in a request). On failure returns -EINVAL and says why in |err|
 * (without naming the entry: the caller knows where it came from). */
int glove_net_dest_parse(const char *s, bool wildcard, struct glove_net_dest *ret, char *err, size_t errlen);

/* "host:port", "[v6]:port" or "*.suffix:port" into |buf|. */
void glove_net_dest_format(const struct glove_net_dest *d, char buf[GLOVE_NET_DEST_MAX]);

/* Whether allow entry |entry| admits request |req| (parsed without
 * wildcards): same port, and the same name, a name below a wildcard's
 * suffix, or the same address. A name never matches an address. */
bool glove_net_allow_match(const struct glove_net_dest *entry, const struct glove_net_dest *req);

/* A port the user publishes (docs/network.md, "Published ports"): a
 * listener on the host's 127.0.0.1:host_port whose connections are relayed
 * to 127.0.0.1:port inside the sandbox. */
struct glove_net_publish {
        uint16_t host_port;
        uint16_t port;
};
#define GLOVE_NET_PUBLISH_MAX 16

struct glove_env_set {
        char *name;
        char *value;
};

/* An agent profile (docs/profiles.md): a policy fragment shipped as data
 * (profiles/NAME.json) whose "profile" section says how to find the agent
 * on the host and what to prepare for it. The loader keeps it here as
 * written; the session resolves it on the host (src/session/session-profile.c),
 * filling in |found| and adding the grants it implies. */
struct glove_profile_state {
        char *path; /* expanded: a directory made 0700 if missing, granted "rw" */
        char *env;  /* a variable set to |path| inside, or NULL */
};

struct glove_profile_readonly {
        char *path;    /* expanded: inside a state directory, kept read-only (a protected path) */
        char *initial; /* a missing file is created with this content first; NULL: a directory (made 0700) */
};

struct glove_profile {
        char *name;
        char *source;      /* the profile file */
        char *description;
        char *command;     /* the agent's command name, as looked up and as argv[0] is matched */
        char **search;     /* where to look: "$PATH", "${VAR}/dir", "~/dir", "/dir", one "*" component */
        size_t n_search;
        char *marker;      /* a file naming the package root above the real executable ("package.json") */
        uint64_t marker_depth; /* how many directories up to look for it */
        char **also;       /* paths relative to the package root granted read-only if they exist */
        size_t n_also;
        char **companions; /* commands next to the agent's, granted with it if there ("node") */
        size_t n_companions;
        char **args;       /* inserted after argv[0] when the command is the agent */
        size_t n_args;
        struct glove_profile_state *state;
        size_t n_state;
        struct glove_profile_readonly *readonly;
        size_t n_readonly;
        char *found;       /* resolved by the session: the command as found on the host, NULL before */
};

void glove_profile_free(struct glove_profile *pr);

struct glove_policy {
        struct glove_grant *grants;
        size_t n_grants;
        char **symlinks; /* host symlinks recreated inside, e.g. /bin -> usr/bin */
        size_t n_symlinks;
        char **protect; /* extra protected paths: absolute, or names relative to each writable grant */
        size_t n_protect;
        char **unprotect; /* built-in protected names the operator releases */
        size_t n_unprotect;
        char **env_pass;
        size_t n_env_pass;
        struct glove_env_set *env_set;
        size_t n_env_set;
        enum glove_net_mode net;
        char *cwd;
        char *hostname;
        /* The host uid and gid the agent runs as when Glove is started by
         * root: the operator's explicit choice, or both
         * GLOVE_ROOT_UID_ALLOCATED (a uid of the run's own) */
        uid_t root_uid;
        gid_t root_gid;
        char *source; /* the policy file's path, or "built-in default" */
        char *audit_path; /* the audit log; NULL until set: then <state>/audit.jsonl */
        bool audit_raw_values; /* record secret values themselves, not only their SHA-256 */
        uint64_t audit_raw_max; /* bytes kept of each raw value */
        uint64_t audit_rotate;  /* audit.rotate_bytes: the log's size before rotation, 0 for the default (64M) */
        struct glove_mcp_policy *mcp; /* the "mcp" section, NULL without one; the sandbox ignores it */
        uint64_t wall_ms;       /* limits.wall: the wall-time watchdog, 0 for none */
        uint64_t output_limit;  /* limits.output: bytes the agent may write (terminal or pipes), 0 for none */
        uint64_t transcript_tail; /* audit.transcript_tail: bytes of output tail in the receipt, 0 for none */
        struct glove_net_dest *net_allow; /* network.allow / --allow (proxy mode) */
        size_t n_net_allow;
        struct glove_net_publish *net_publish; /* network.publish / --publish (loopback and proxy modes) */
        size_t n_net_publish;
        /* resource limits (src/policy/policy-limits.c, src/sandbox/sandbox-cgroup.c); 0 for none */
        uint64_t memory_max;    /* limits.memory, bytes */
        uint64_t pids_max;      /* limits.pids: tasks in the sandbox, its init included */
        uint64_t cpu_milli;     /* limits.cpu, thousandths of a core */
        uint64_t open_files;    /* limits.open_files: RLIMIT_NOFILE of the agent */
        bool require_cgroup;    /* limits.require_cgroup: no cgroup v2, no run */
        uint64_t shm_size;      /* limits.shm: the size of /dev/shm, 0 for the default */
        bool terminal_clipboard; /* terminal.clipboard: the agent's clipboard writes (OSC 52) reach the
                                  * user's terminal */
        char **path_prepend;    /* environment.path_prepend: directories put before the default PATH */
        size_t n_path_prepend;
        struct glove_profile *profile; /* the agent profile the policy extends, NULL for none */
};

#define GLOVE_POLICY_MAX_WALL_MS ((uint64_t) 30 * 24 * 3600 * 1000) /* 30 days */
#define GLOVE_POLICY_MIN_MEMORY ((uint64_t) 1 << 20)
#define GLOVE_POLICY_MIN_PIDS 2u            /* the sandbox's init and the agent */
#define GLOVE_POLICY_MAX_PIDS 4194304u      /* PID_MAX_LIMIT */
#define GLOVE_POLICY_MIN_CPU_MILLI 10u      /* cpu.max: 1 ms per 100 ms period */
#define GLOVE_POLICY_MAX_CPU_MILLI 1024000u /* 1024 cores */
#define GLOVE_POLICY_MIN_OPEN_FILES 4u
#define GLOVE_POLICY_MAX_OPEN_FILES 1048576u /* the default fs.nr_open */
#define GLOVE_DEFAULT_SHM_SIZE ((uint64_t) 256 << 20)
/* The built-in default's limits (docs/policy.md): pids, and memory as a
 * fraction of the host's RAM (MemTotal / GLOVE_DEFAULT_MEMORY_DIVISOR,
 * read when the policy is built). */
#define GLOVE_DEFAULT_PIDS 4096u
#define GLOVE_DEFAULT_MEMORY_DIVISOR 2u
/* base64 of it (4/3) and the rest of the receipt stay under
 * GLOVE_RECEIPT_MAX_BYTES (64 KiB) */
#define GLOVE_POLICY_MAX_TRANSCRIPT_TAIL ((uint64_t) 32 << 10)

/* Values the loader substitutes: "~" and "~/..." use home, "${PWD}" uses pwd. */
struct glove_policy_context {
        const char *home;
        const char *pwd;
};

/* Built-in protected names, relative to every writable grant. */
extern const char *const glove_protected_names[];

int glove_policy_new(const char *source, struct glove_policy **ret);
void glove_policy_free(struct glove_policy *p);
static inline void glove_policy_freep(struct glove_policy **p) {
        glove_policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(glove_policy_freep)))

/* The built-in default: system directories read-only, ${PWD} writable,
 * empty private HOME and /tmp, offline. Refuses (with a reason in |err|) a
 * working directory that is "/", the home directory or an ancestor of it. */
int glove_policy_new_default(const struct glove_policy_context *ctx, struct glove_policy **ret, char *err,
                             size_t errlen);

/* Parses a policy document. |origin| names it in messages. Unknown keys and
 * every invalid value are errors naming the JSON path. A document with
 * "base": "default" starts from glove_policy_new_default() (and its
 * refusals) and adds its own fields. */
int glove_policy_load_json(const json_t *doc, const char *origin, const struct glove_policy_context *ctx,
                           struct glove_policy **ret, char *err, size_t errlen);
int glove_policy_load_file(const char *path, const struct glove_policy_context *ctx, struct glove_policy **ret,
                           char *err, size_t errlen);

/* A policy document on top of an agent profile (docs/profiles.md,
 * "Merging"): the user's document's base (or, with |user| NULL, the
 * built-in default), then the profile document's fields (whose messages
 * say "profile NAME"), then the user's. Lists append, the user's scalars
 * win, and a grant of the user's that contradicts one of the profile's is
 * an error. |profile| must hold a "profile" section, |user| must not (it
 * may say "extends": NAME, which the caller resolved into |profile|). */
int glove_policy_load_with_profile(const json_t *user, const char *user_origin, const json_t *profile,
                                   const char *profile_origin, const struct glove_policy_context *ctx,
                                   struct glove_policy **ret, char *err, size_t errlen);
/* The name a policy document extends ("extends"), NULL for none; -EINVAL
 * with the reason when it is not a valid profile name. */
int glove_policy_extends(const json_t *doc, const char **ret, char *err, size_t errlen);
/* A profile name: 1-64 of [a-z0-9_-], starting with a letter or digit. */
bool glove_profile_name_valid(const char *name);
/* environment.path_prepend: a directory (absolute, "~/", "${PWD}"). */
int glove_policy_add_path_prepend(struct glove_policy *p, const struct glove_policy_context *ctx, const char *dir,
                                  char *err, size_t errlen);

/* Amending. |path| may use "~/" and "${PWD}"; |origin| is kept for messages.
 * A second grant of the same path and kind is merged; a different kind is
 * refused as contradictory (-EEXIST), but for an overlay grant of a path
 * that only the built-in default made writable ("rw", origin "default"):
 * the narrower overlay replaces it. |size| 0 is the kind's default. An
 * overlay grant added here is ephemeral. */
int glove_policy_add_grant(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                           enum glove_grant_kind kind, uint64_t size, const char *origin, char *err, size_t errlen);
/* An overlay grant with its lifetime: |retained| keeps its upper layer as
 * a change set (<state>/changes/<run-id>, docs/changes.md); a policy holds
 * at most one retained overlay, since a run has one change set. */
int glove_policy_add_overlay(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                             uint64_t size, bool retained, const char *origin, char *err, size_t errlen);
/* A host-bound grant (ro, rw or overlay, not tmpfs) that may be missing:
 * the sandbox skips it, recording that it was absent, when the path does
 * not exist. The same path granted both ways is required. */
int glove_policy_add_optional_grant(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                                    enum glove_grant_kind kind, uint64_t size, bool retained, const char *origin,
                                    char *err, size_t errlen);
int glove_policy_add_symlink(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                             char *err, size_t errlen);
int glove_policy_add_protect(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                             char *err, size_t errlen);
int glove_policy_add_unprotect(struct glove_policy *p, const char *name, char *err, size_t errlen);
int glove_policy_add_env_pass(struct glove_policy *p, const char *name, char *err, size_t errlen);
int glove_policy_add_env_set(struct glove_policy *p, const char *name, const char *value, char *err, size_t errlen);
int glove_policy_set_cwd(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path, char *err,
                         size_t errlen);
int glove_policy_set_hostname(struct glove_policy *p, const char *hostname, char *err, size_t errlen);
int glove_policy_set_audit_path(struct glove_policy *p, const struct glove_policy_context *ctx, const char *path,
                                char *err, size_t errlen);
/* limits.wall / --wall-time: "30m", "2s"... from 1s to 30 days. */
int glove_policy_set_wall(struct glove_policy *p, const char *duration, char *err, size_t errlen);
/* limits.output / --output-limit: at least 1 byte. */
int glove_policy_set_output_limit(struct glove_policy *p, uint64_t bytes, char *err, size_t errlen);
/* audit.transcript_tail / --transcript-tail: 0 (none) to 32 KiB. */
int glove_policy_set_transcript_tail(struct glove_policy *p, uint64_t bytes, char *err, size_t errlen);
/* limits.memory / --memory ("2G", at least 1M), limits.pids / --pids
 * (2 to 4194304), either "none" for no limit (what the default's become), limits.cpu / --cpu (cores, "1.5", 0.01 to 1024),
 * limits.open_files / --open-files (4 to 1048576), limits.shm (a size).
 * Errors name the limit. */
int glove_policy_set_memory(struct glove_policy *p, const char *size, char *err, size_t errlen);
int glove_policy_set_pids(struct glove_policy *p, const char *n, char *err, size_t errlen);
int glove_policy_set_cpu(struct glove_policy *p, const char *cores, char *err, size_t errlen);
int glove_policy_set_open_files(struct glove_policy *p, const char *n, char *err, size_t errlen);
int glove_policy_set_shm(struct glove_policy *p, const char *size, char *err, size_t errlen);
/* Turns raw values on with |max| bytes kept of each (1..64 KiB). */
int glove_policy_set_audit_raw(struct glove_policy *p, uint64_t max, char *err, size_t errlen);
int glove_policy_parse_net(const char *s, enum glove_net_mode *ret);
int glove_policy_parse_kind(const char *s, enum glove_grant_kind *ret);

const char *glove_grant_kind_to_string(enum glove_grant_kind k);
const char *glove_net_mode_to_string(enum glove_net_mode m);

/* The effective policy as a JSON document in the file format (paths
 * expanded), for --dry-run and for digests. */
int glove_policy_to_json(const struct glove_policy *p, json_t **ret);

/* Adds an entry to p->net_allow (a repeated entry is kept once). Errors as
 * glove_net_dest_parse(), prefixed with the entry. */
int glove_policy_add_net_allow(struct glove_policy *p, const char *entry, char *err, size_t errlen);

/* Adds a published port; a host port published twice, a port of 0 or past
 * GLOVE_NET_PUBLISH_MAX entries is an error (said in |err|, without a
 * location). */
int glove_policy_add_net_publish(struct glove_policy *p, uint32_t host_port, uint32_t port, char *err,
                                 size_t errlen);
/* --publish's argument: "PORT" (the same on both sides) or
 * "HOST_PORT:PORT", decimal 1..65535 without leading zeros. */
int glove_policy_add_net_publish_arg(struct glove_policy *p, const char *arg, char *err, size_t errlen);

/* The effective policy's network section holds together: allow entries
 * only in proxy mode, published ports not offline. */
int glove_policy_check_net(const struct glove_policy *p, char *err, size_t errlen);

/* SPDX-License-Identifier: MIT */
/* glove ctl METHOD [ARGS] [--json]: the owner's client of gloved
 * (docs/control.md). It connects as the owner, does the handshake with the
 * bootstrap secret beside the socket, calls one method and prints its
 * answer. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "glove/control.h"
#include "glove/host.h"
#include "glove/json.h"
#include "glove/sandbox.h"
#include "log.h"
#include "macro.h"

static void help(FILE *f) {
        (void) fprintf(f,
                "usage: glove ctl capabilities [--json]\n"
                "       glove ctl exposure list [--history] [--json]\n"
                "       glove ctl exposure revoke ALIAS [--json]\n"
                "       glove ctl plan validate FILE [--json]\n"
                "       glove ctl session create KEY FILE [--json]\n"
                "       glove ctl session start ID [--attach] [--json]\n"
                "       glove ctl session status|cleanup ID [--json]\n"
                "       glove ctl attach ID\n"
                "       glove ctl session stop ID [--force] [--json]\n"
                "       glove ctl session signal ID NAME [--json]\n"
                "       glove ctl session list [--state STATE] [--json]\n"
                "       glove ctl receipts page [--after SEQ] [--max-count N] [--json]\n"
                "       glove ctl receipts ack SEQ SHA256 [--json]\n"
                "       glove ctl receipts part SEQ PART [--json]\n"
                "       glove ctl channel page ID [--after SEQ] [--max-count N] [--json]\n"
                "       glove ctl channel ack ID SEQ SHA256 [--json]\n"
                "\n"
                "Talks to gloved, this user's control service, on\n"
                "$XDG_RUNTIME_DIR/glove/gloved.sock as its owner: it checks the directory\n"
                "(yours, 0700), reads the bootstrap secret beside the socket (yours, 0600),\n"
                "makes sure gloved runs as you and proves it holds the same secret, then\n"
                "proves it holds it too (docs/control.md).\n"
                "\n"
                "  capabilities  what gloved offers: its methods, the schema versions of\n"
                "                each surface (0: not built yet, and why), and the kernel\n"
                "                mechanisms this host enforces, as probed when gloved started\n"
                "  exposure list the directories enrolled with 'glove init': alias, generation,\n"
                "                mode, path (--history: revoked generations too)\n"
                "  exposure revoke ALIAS\n"
                "                end ALIAS's current generation: plans that name it stop\n"
                "                matching; 'glove init' may enrol the alias again (generation + 1)\n"
                "  plan validate FILE\n"
                "                check the plan in FILE (one JSON object, at most 256 KiB)\n"
                "                against gloved.json and the exposures: its digests and the\n"
                "                limits it would run with; nothing is stored\n"
                "  session create KEY FILE\n"
                "                a managed session of the plan in FILE, under the request key\n"
                "                KEY (1-64 of a-z 0-9 _ -): the same KEY with the same plan\n"
                "                answers the session made the first time\n"
                "  session start ID\n"
                "                run it: gloved starts its supervisor and the sandbox\n"
                "                (--attach: then attach to it, as below)\n"
                "  attach ID     the session's terminal here, as glove exec gives it: its\n"
                "                output from the last 64 KiB on, what you type (Ctrl-C\n"
                "                reaches its foreground job), your terminal's size; Ctrl-]\n"
                "                detaches (it goes on). The session's exit status when it\n"
                "                ends while attached; without a terminal on stdin, or a\n"
                "                session without one, its output only\n"
                "  session status ID\n"
                "                its state, how it ended, its receipt's seq, its output's size\n"
                "  session list  every session, oldest first: id, state, request key\n"
                "                (--state STATE: created, starting, running, ended or cleaned)\n"
                "  session stop ID\n"
                "                end it: SIGTERM to a running one (--force: SIGKILL, and\n"
                "                gloved writes the receipt, reason killed)\n"
                "  session signal ID NAME\n"
                "                send its command signal NAME: INT, TERM, HUP, KILL, TSTP,\n"
                "                CONT or WINCH (nothing else)\n"
                "  session cleanup ID\n"
                "                remove an ended session's files; its record and receipt stay\n"
                "  receipts page the journal's records not yet acknowledged, oldest first:\n"
                "                seq, SHA-256, kind, reason (--after SEQ: past SEQ;\n"
                "                --max-count N: 1-100); each record's SHA-256 is checked\n"
                "  receipts ack SEQ SHA256\n"
                "                acknowledge record SEQ, whose line has that SHA-256: it is\n"
                "                not paged again\n"
                "  receipts part SEQ PART\n"
                "                a record too long for one frame (receipts page shows its\n"
                "                parts): part PART of its line, as bytes, on stdout\n"
                "  channel page ID\n"
                "                session ID's guest observations not yet acknowledged: seq,\n"
                "                SHA-256, schema, intent id, body (--after SEQ, --max-count N:\n"
                "                1-32); each SHA-256 is checked; a quarantined one (its schema\n"
                "                no longer registered) shows no body\n"
                "  channel ack ID SEQ SHA256\n"
                "                acknowledge observation SEQ of session ID with that SHA-256:\n"
                "                it is not paged again\n"
                "\n"
                "  --json        print gloved's answer as it came: one JSON object on one\n"
                "                line (session list: all its pages in one)\n"
                "  -h, --help    this text\n"
                "\n"
                "Exit status: 0 when gloved answered; 125 when it could not be reached, was\n"
                "refused or refused the call (the reason is printed).\n");
}

static void print_capabilities(const json_t *caps) {
        json_t *schemas = json_object_get(caps, "schemas"), *not_offered = json_object_get(caps, "not_offered"),
               *mechanisms = json_object_get(caps, "mechanisms"), *methods = json_object_get(caps, "methods"),
               *host = json_object_get(caps, "host"), *v;
        const char *key;
        size_t i;

        (void) printf("gloved %s, control protocol %lld, connected as %s\n\n",
                      json_string_value(json_object_get(caps, "glove_version")) ?: "?",
                      (long long) json_integer_value(json_object_get(caps, "protocol")),
                      json_string_value(json_object_get(caps, "role")) ?: "?");
        (void) printf("methods:");
        json_array_foreach(methods, i, v)
                (void) printf(" %s", json_string_value(v) ?: "?");
        (void) printf("\n\nschema versions (0: not offered):\n");
        json_object_foreach(schemas, key, v) {
                const char *why = json_string_value(json_object_get(not_offered, key));

                (void) printf("  %-22s %lld%s%s\n", key, (long long) json_integer_value(v), why ? "  " : "",
                              why ?: "");
        }
        (void) printf("\nmechanisms this host enforces (probed when gloved started; 'glove doctor' says why):\n");
        json_object_foreach(mechanisms, key, v)
                (void) printf("  %-22s %s\n", key, json_string_value(v) ?: "?");
        (void) printf("\n'glove exec' can run here: %s\n",
                      json_is_true(json_object_get(host, "exec_ready")) ? "yes" : "no");
}

static void print_exposures(const json_t *result) {
        json_t *list = json_object_get(result, "exposures"), *e;
        size_t i;

        if (json_array_size(list) == 0) {
                (void) printf("no exposures enrolled ('glove init DIR --alias NAME' enrols one)\n");
                return;
        }
        (void) printf("%-24s %-10s %-4s %-8s %s\n", "ALIAS", "GENERATION", "MODE", "STATE", "PATH");
        json_array_foreach(list, i, e)
                (void) printf("%-24s %-10lld %-4s %-8s %s\n", json_string_value(json_object_get(e, "alias")) ?: "?",
                              (long long) json_integer_value(json_object_get(e, "generation")),
                              json_string_value(json_object_get(e, "mode")) ?: "?",
                              json_is_true(json_object_get(e, "current")) ? "current" : "revoked",
                              json_string_value(json_object_get(e, "path")) ?: "?");
}

int cli_ctl_connect(struct glove_control_client *ret) {
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        char err[1024] = "";
        int r;

        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = glove_control_client_connect(dirs.runtime, GLOVE_CONTROL_ROLE_OWNER, ret, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        return 0;
}

int cli_ctl_call_on(struct glove_control_client *c, const char *method, json_t *params, json_t **ret) {
        char err[1024] = "";
        int r;

        r = glove_control_client_call(c, method, params, ret, NULL, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        return 0;
}

int cli_ctl_call(const char *method, json_t *params, json_t **ret) {
        _cleanup_(glove_control_client_close) struct glove_control_client client = GLOVE_CONTROL_CLIENT_INIT;
        int r;

        r = cli_ctl_connect(&client);
        if (r < 0)
                return r;
        return cli_ctl_call_on(&client, method, params, ret);
}

int cli_ctl_print_json(const json_t *result) {
        _cleanup_free_ char *text = json_dumps(result, JSON_COMPACT | JSON_SORT_KEYS);

        if (!text)
                return log_error_errno(-ENOMEM, "Out of memory");
        (void) printf("%s\n", text);
        return 0;
}

bool cli_ctl_options_fit(const struct cli_ctl_options *o, unsigned takes, const char *command) {
        static const struct {
                unsigned bit;
                const char *name;
        } names[] = {
                { CLI_CTL_HISTORY, "--history" },     { CLI_CTL_FORCE, "--force" },
                { CLI_CTL_STATE, "--state" },         { CLI_CTL_AFTER, "--after" },
                { CLI_CTL_MAX_COUNT, "--max-count" },
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if ((o->given & names[i].bit) && !(takes & names[i].bit)) {
                        log_error("ctl: '%s' does not take %s. Try 'glove ctl --help'.", command, names[i].name);
                        return false;
                }
        return true;
}

/* capabilities and exposure list|revoke: one call, one answer */
static int ctl_catalog(const struct cli_ctl_options *o, int n, char **words) {
        _cleanup_json_ json_t *result = NULL, *params = NULL;
        const char *method;
        int r;

        if (strcmp(words[0], "capabilities") == 0 && n == 1) {
                if (!cli_ctl_options_fit(o, 0, "capabilities"))
                        return GLOVE_EXIT_FAILED;
                method = "capabilities";
        } else if (strcmp(words[0], "exposure") == 0 && n == 2 && strcmp(words[1], "list") == 0) {
                if (!cli_ctl_options_fit(o, CLI_CTL_HISTORY, "exposure list"))
                        return GLOVE_EXIT_FAILED;
                method = "exposure.list";
                params = json_pack("{s:b}", "history", !!(o->given & CLI_CTL_HISTORY));
        } else if (strcmp(words[0], "exposure") == 0 && n == 3 && strcmp(words[1], "revoke") == 0) {
                if (!cli_ctl_options_fit(o, 0, "exposure revoke"))
                        return GLOVE_EXIT_FAILED;
                method = "exposure.revoke";
                params = json_pack("{s:s}", "alias", words[2]);
        } else if (strcmp(words[0], "exposure") == 0) {
                log_error("ctl: 'exposure%s%s' is not 'exposure list [--history]' or 'exposure revoke ALIAS'. Try "
                          "'glove ctl --help'.",
                          n > 1 ? " " : "", n > 1 ? words[1] : "");
                return GLOVE_EXIT_FAILED;
        } else {
                log_error("ctl: 'capabilities' takes no arguments, got '%s'", words[1]);
                return GLOVE_EXIT_FAILED;
        }
        if (strcmp(method, "capabilities") != 0 && !params) {
                (void) log_error_errno(-ENOMEM, "Out of memory");
                return GLOVE_EXIT_FAILED;
        }

        r = cli_ctl_call(method, params, &result);
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        if (o->json)
                r = cli_ctl_print_json(result);
        else if (strcmp(method, "capabilities") == 0)
                print_capabilities(result);
        else if (strcmp(method, "exposure.list") == 0)
                print_exposures(result);
        else
                (void) printf("revoked %s@%lld: plans that name it no longer match\n", words[2],
                              (long long) json_integer_value(json_object_get(result, "revoked_generation")));
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        if (fflush(stdout) != 0) {
                (void) log_error_errno(negative_errno(), "Failed to write the answer: %m");
                return GLOVE_EXIT_FAILED;
        }
        return 0;
}

int cli_ctl(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "history", no_argument, NULL, 'H' },
                { "force", no_argument, NULL, 'f' },
                { "state", required_argument, NULL, 's' },
                { "after", required_argument, NULL, 'a' },
                { "max-count", required_argument, NULL, 'n' },
                { "attach", no_argument, NULL, 'A' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct cli_ctl_options o = {};
        int c;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'j':
                        o.json = true;
                        break;
                case 'H':
                        o.given |= CLI_CTL_HISTORY;
                        break;
                case 'f':
                        o.given |= CLI_CTL_FORCE;
                        break;
                case 's':
                        o.given |= CLI_CTL_STATE;
                        o.state = optarg;
                        break;
                case 'a':
                        o.given |= CLI_CTL_AFTER;
                        o.after = optarg;
                        break;
                case 'n':
                        o.given |= CLI_CTL_MAX_COUNT;
                        o.max_count = optarg;
                        break;
                case 'A':
                        o.given |= CLI_CTL_ATTACH;
                        break;
                case '?':
                        cli_unknown_option("ctl", argv);
                        return GLOVE_EXIT_FAILED;
                default:
                        return GLOVE_EXIT_FAILED;
                }
        }
        if (optind >= argc) {
                log_error("ctl: which method? Try 'glove ctl --help'.");
                return GLOVE_EXIT_FAILED;
        }
        if (strcmp(argv[optind], "capabilities") == 0 || strcmp(argv[optind], "exposure") == 0)
                return ctl_catalog(&o, argc - optind, argv + optind);
        if (strcmp(argv[optind], "attach") == 0) {
                if (argc - optind != 2 || !cli_ctl_options_fit(&o, 0, "attach")) {
                        if (argc - optind != 2)
                                log_error("ctl: attach takes one session id. Try 'glove ctl --help'.");
                        return GLOVE_EXIT_FAILED;
                }
                return cli_ctl_attach(argv[optind + 1], false);
        }
        if (cli_ctl_session_has(argv[optind]))
                return cli_ctl_session(&o, argc - optind, argv + optind);
        log_error("ctl: no method '%s' in glove ctl; it has: capabilities, exposure, plan, session, receipts. Try "
                  "'glove ctl --help'.",
                  argv[optind]);
        return GLOVE_EXIT_FAILED;
}

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
                "\n"
                "  --json        print gloved's answer as one JSON object\n"
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

int cli_ctl_call(const char *method, json_t *params, json_t **ret) {
        _cleanup_(glove_control_client_close) struct glove_control_client client = GLOVE_CONTROL_CLIENT_INIT;
        _cleanup_(glove_dirs_done) struct glove_dirs dirs = {};
        char err[1024] = "";
        int r;

        r = glove_dirs_resolve(&dirs, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = glove_control_client_connect(dirs.runtime, GLOVE_CONTROL_ROLE_OWNER, &client, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        r = glove_control_client_call(&client, method, params, ret, NULL, err, sizeof(err));
        if (r < 0)
                return log_error_errno(r, "%s", err);
        return 0;
}

int cli_ctl_print_json(const json_t *result) {
        _cleanup_free_ char *text = json_dumps(result, JSON_INDENT(2) | JSON_SORT_KEYS);

        if (!text)
                return log_error_errno(-ENOMEM, "Out of memory");
        (void) printf("%s\n", text);
        return 0;
}

int cli_ctl(int argc, char **argv) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "history", no_argument, NULL, 'H' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_json_ json_t *result = NULL, *params = NULL;
        const char *method, *verb = NULL;
        bool json = false, history = false;
        int c, r, operands;

        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        help(stdout);
                        return 0;
                case 'j':
                        json = true;
                        break;
                case 'H':
                        history = true;
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
        operands = argc - optind;
        if (strcmp(argv[optind], "capabilities") == 0 && operands == 1 && !history)
                method = "capabilities";
        else if (strcmp(argv[optind], "exposure") == 0 && operands >= 2) {
                verb = argv[optind + 1];
                if (strcmp(verb, "list") == 0 && operands == 2) {
                        method = "exposure.list";
                        params = json_pack("{s:b}", "history", history);
                } else if (strcmp(verb, "revoke") == 0 && operands == 3 && !history) {
                        method = "exposure.revoke";
                        params = json_pack("{s:s}", "alias", argv[optind + 2]);
                } else {
                        log_error("ctl: 'exposure %s' is not 'exposure list [--history]' or 'exposure revoke "
                                  "ALIAS'. Try 'glove ctl --help'.",
                                  verb);
                        return GLOVE_EXIT_FAILED;
                }
                if (!params) {
                        (void) log_error_errno(-ENOMEM, "Out of memory");
                        return GLOVE_EXIT_FAILED;
                }
        } else {
                log_error("ctl: no method '%s' in glove ctl; it has: capabilities, exposure list, exposure revoke "
                          "ALIAS. Try 'glove ctl --help'.",
                          argv[optind]);
                return GLOVE_EXIT_FAILED;
        }

        r = cli_ctl_call(method, params, &result);
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        if (json)
                r = cli_ctl_print_json(result);
        else if (strcmp(method, "capabilities") == 0)
                print_capabilities(result);
        else if (strcmp(method, "exposure.list") == 0)
                print_exposures(result);
        else
                (void) printf("revoked %s@%lld: plans that name it no longer match\n", argv[optind + 2],
                              (long long) json_integer_value(json_object_get(result, "revoked_generation")));
        if (r < 0)
                return GLOVE_EXIT_FAILED;
        if (fflush(stdout) != 0) {
                (void) log_error_errno(negative_errno(), "Failed to write the answer: %m");
                return GLOVE_EXIT_FAILED;
        }
        return 0;
}

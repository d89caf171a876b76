/* SPDX-License-Identifier: MIT */
/* What capabilities answers. Nothing here is a promise of what is to
 * come: a schema is 1 only when its methods are built and answer, and the
 * mechanisms are what the doctor's probes found this host enforces when
 * gloved started. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd-util.h"
#include "file-util.h"
#include "glove/control.h"
#include "glove/doctor.h"
#include "glove/json.h"
#include "glove/observation.h"
#include "macro.h"

/* Every surface of the specification, whether it is built (1) or not (0),
 * and for those that are not, why. */
static const struct {
        const char *name;
        int version;
        const char *not_offered;
} surfaces[] = {
        { "control", 1, NULL },
        { "plan", 1, NULL },
        /* 1 only when sessions can start here: see below */
        { "lifecycle", 1, NULL },
        { "receipts", 1, NULL },
        { "exposures", 1, NULL },
        /* 1 only when sessions can start and the bundle store checks out:
         * glove_control_capabilities_bundles() */
        { "bundle_projection", 0, "the bundle store was not checked" },
        /* 1 only with lifecycle and bundle_projection:
         * glove_control_capabilities_refinement() */
        { "refinement_eval", 0, "the runtime and the bundle store were not checked" },
        /* 1 only when the whole chain was composed:
         * glove_control_capabilities_guest_channel() */
        { "guest_channel", 0, "guest channels are not built" },
        { "remote_backend", 0, "there is no remote backend" },
        { "retained_change_apply", 0, "retained-change apply is not built" },
};

#define DOCTOR_JSON_MAX ((size_t) 1 << 20)

int glove_control_probe_host(const char *glove_version, json_t **ret) {
        _cleanup_close_pair_ int pipefd[2] = { -EBADF, -EBADF };
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int status, r, rr;
        pid_t pid;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return negative_errno();
        pid = fork();
        if (pid < 0)
                return negative_errno();
        if (pid == 0) {
                _cleanup_doctor_report_ struct glove_doctor_report *report = NULL;
                _cleanup_json_ json_t *doctor = NULL;
                _cleanup_free_ char *out = NULL;

                pipefd[0] = safe_close(pipefd[0]);
                if (glove_doctor_run(&report) < 0 || glove_doctor_report_to_json(report, glove_version, &doctor) < 0)
                        _exit(EXIT_FAILURE);
                out = json_dumps(doctor, JSON_COMPACT);
                if (!out || write_all(pipefd[1], out, strlen(out)) < 0)
                        _exit(EXIT_FAILURE);
                _exit(EXIT_SUCCESS);
        }
        pipefd[1] = safe_close(pipefd[1]);
        r = read_full_fd(pipefd[0], DOCTOR_JSON_MAX, &text, &len);
        while ((rr = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                ;
        if (rr < 0)
                return negative_errno();
        if (r < 0)
                return r;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -ECHILD;
        return glove_json_parse(text, len, NULL, ret, NULL, 0);
}

int glove_control_capabilities(const json_t *doctor, const char *glove_version, const char *sessions_unavailable,
                                json_t **ret) {
        _cleanup_json_ json_t *root = NULL, *schemas = NULL, *not_offered = NULL, *mechanisms = NULL;
        json_t *checks, *ready, *check;
        size_t i;

        schemas = json_object();
        not_offered = json_object();
        mechanisms = json_object();
        if (!schemas || !not_offered || !mechanisms)
                return -ENOMEM;
        for (i = 0; i < ELEMENTSOF(surfaces); i++) {
                if (json_object_set_new(schemas, surfaces[i].name, json_integer(surfaces[i].version)) < 0)
                        return -ENOMEM;
                if (surfaces[i].not_offered &&
                    json_object_set_new(not_offered, surfaces[i].name, json_string(surfaces[i].not_offered)) < 0)
                        return -ENOMEM;
        }
        checks = json_object_get(doctor, "checks");
        ready = json_object_get(doctor, "ready");
        if (!json_is_array(checks) || !json_is_boolean(ready))
                return -EINVAL;
        /* managed sessions are glove exec's sandbox: offered only where
         * the doctor found everything it requires, and gloved could set
         * up its side (the sessions directory, its own executable) */
        if (!json_is_true(ready) || sessions_unavailable) {
                const char *why = sessions_unavailable
                                          ? sessions_unavailable
                                          : "managed sessions cannot start on this host: a mechanism 'glove exec' "
                                            "requires is missing ('glove doctor' on the host says which)";

                if (json_object_set_new(schemas, "lifecycle", json_integer(0)) < 0 ||
                    json_object_set_new(not_offered, "lifecycle", json_string(why)) < 0)
                        return -ENOMEM;
        }
        /* names and states only: a check's detail may name host paths */
        json_array_foreach(checks, i, check) {
                json_t *name = json_object_get(check, "name"), *status = json_object_get(check, "status");

                if (!json_is_string(name) || !json_is_string(status))
                        return -EINVAL;
                if (json_object_set(mechanisms, json_string_value(name), status) < 0)
                        return -ENOMEM;
        }

        root = json_pack("{s:i, s:s, s:O, s:O, s:O, s:{s:b}, s:{s:i, s:i, s:i, s:i, s:i, s:i}}", "protocol",
                         GLOVE_CONTROL_PROTOCOL, "glove_version", glove_version, "schemas", schemas, "not_offered",
                         not_offered, "mechanisms", mechanisms, "host", "exec_ready",
                         json_is_true(ready), "limits", "frame_bytes", GLOVE_CONTROL_FRAME_MAX,
                         "depth", GLOVE_CONTROL_DEPTH_MAX, "calls_in_flight", GLOVE_CONTROL_IN_FLIGHT_MAX,
                         "connections", GLOVE_CONTROL_CONNECTIONS_MAX, "frame_seconds", GLOVE_CONTROL_FRAME_SECONDS,
                         "handshake_seconds", GLOVE_CONTROL_HANDSHAKE_SECONDS);
        if (!root)
                return -ENOMEM;
        *ret = TAKE_PTR(root);
        return 0;
}

int glove_control_capabilities_bundles(json_t *caps, const char *unavailable) {
        json_t *schemas = json_object_get(caps, "schemas"), *not_offered = json_object_get(caps, "not_offered");
        const char *why = unavailable;

        if (!json_is_object(schemas) || !json_is_object(not_offered))
                return -EINVAL;
        /* a bundle is projected into a managed session: none, none projected */
        if (json_integer_value(json_object_get(schemas, "lifecycle")) != 1)
                why = "managed sessions cannot start here, so no bundle is projected";
        if (why)
                return json_object_set_new(schemas, "bundle_projection", json_integer(0)) < 0 ||
                                       json_object_set_new(not_offered, "bundle_projection", json_string(why)) < 0
                               ? -ENOMEM
                               : 0;
        if (json_object_set_new(schemas, "bundle_projection", json_integer(1)) < 0)
                return -ENOMEM;
        (void) json_object_del(not_offered, "bundle_projection");
        return 0;
}

int glove_control_capabilities_refinement(json_t *caps, const char **ret_why) {
        json_t *schemas = json_object_get(caps, "schemas"), *not_offered = json_object_get(caps, "not_offered");
        const char *why = NULL;

        if (!json_is_object(schemas) || !json_is_object(not_offered))
                return -EINVAL;
        if (json_integer_value(json_object_get(schemas, "lifecycle")) != 1)
                why = "managed sessions cannot start here, so no refinement session runs";
        else if (json_integer_value(json_object_get(schemas, "bundle_projection")) != 1)
                why = "the bundle store is not in order, so no fixture can be read nor skill projected";
        *ret_why = why;
        if (why)
                return json_object_set_new(schemas, "refinement_eval", json_integer(0)) < 0 ||
                                       json_object_set_new(not_offered, "refinement_eval", json_string(why)) < 0
                               ? -ENOMEM
                               : 0;
        if (json_object_set_new(schemas, "refinement_eval", json_integer(1)) < 0)
                return -ENOMEM;
        (void) json_object_del(not_offered, "refinement_eval");
        return 0;
}

int glove_control_capabilities_remote(json_t *caps, bool configured) {
        json_t *schemas = json_object_get(caps, "schemas"), *not_offered = json_object_get(caps, "not_offered");

        if (!json_is_object(schemas) || !json_is_object(not_offered))
                return -EINVAL;
        if (!configured)
                return 0;
        /* what a controller could mistake for a remote sandbox, each said
         * to be absent: validated SSH files are not an enforced boundary */
        if (json_object_set_new(schemas, "remote_backend", json_integer(0)) < 0 ||
            json_object_set_new(not_offered, "remote_backend",
                                json_string("the remote backend is configured but not operational: gloved "
                                            "validated it and wrote its SSH files, and connects to nothing")) < 0 ||
            json_object_set_new(caps, "remote",
                                json_pack("{s:b, s:b, s:b, s:i, s:[], s:s}", "configured", 1, "operational", 0,
                                          "lifecycle", 0, "schema", 0, "managed_runtimes", "resource_mechanisms",
                                          "unavailable")) < 0)
                return -ENOMEM;
        return 0;
}

int glove_control_capabilities_guest_channel(json_t *caps, const struct glove_guest_channel_evidence *ev,
                                             const char **ret_why) {
        json_t *schemas = json_object_get(caps, "schemas"), *not_offered = json_object_get(caps, "not_offered");
        const char *why = NULL;

        if (!json_is_object(schemas) || !json_is_object(not_offered))
                return -EINVAL;
        /* every link of the chain, in the order a guest's frame meets them */
        if (json_integer_value(json_object_get(schemas, "lifecycle")) != 1)
                why = "managed sessions cannot start here, so no guest reaches a channel";
        else if (!ev || !ev->registry_frozen || ev->schemas == 0)
                why = "no guest schema was registered and frozen";
        else if (!ev->store_table)
                why = "gloved.db has no observations table";
        else if (!ev->observation_server)
                why = "the observation server was not built";
        else if (!ev->local_service_parents_pinned)
                why = "the local-service proxy did not pin its endpoints' parent directories";
        else if (!ev->local_service_identities_rechecked)
                why = "the local-service proxy does not recheck its sockets' identities";
        *ret_why = why;
        if (why)
                return json_object_set_new(schemas, "guest_channel", json_integer(0)) < 0 ||
                                       json_object_set_new(not_offered, "guest_channel", json_string(why)) < 0
                               ? -ENOMEM
                               : 0;
        if (json_object_set_new(schemas, "guest_channel", json_integer(1)) < 0)
                return -ENOMEM;
        (void) json_object_del(not_offered, "guest_channel");
        return 0;
}

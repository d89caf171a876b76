/* SPDX-License-Identifier: MIT */
/* gloved.json's remote_backend (glove_remote_config_parse) on arbitrary
 * JSON. A refusal names the field; an accepted block holds only values
 * that are one safe ssh_config token each, an untagged image whose digest
 * is container_image_digest, and an ssh-ed25519 key; the files made from
 * it are one known_hosts line and a configuration with each directive. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "glove/json.h"
#include "glove/remote.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_token(const char *s) {
        if (!s[0] || strpbrk(s, " \t\n\"'%#\\*?!,"))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_json_ json_t *doc = NULL;
        _cleanup_free_ char *config = NULL, *known = NULL;
        struct glove_remote_config c;
        char err[1024] = "";
        const char *at, *last;

        if (glove_json_parse((const char *) data, size, NULL, &doc, NULL, 0) < 0)
                return 0;
        if (glove_remote_config_parse(doc, "/remote_backend", &c, err, sizeof(err)) < 0) {
                if (strncmp(err, "/remote_backend", 15) != 0 || strchr(err, '\n'))
                        abort();
                return 0;
        }
        check_token(c.host);
        check_token(c.user);
        if (c.port < 1 || c.port > 65535)
                abort();
        at = strchr(c.image, '@');
        if (!at || strcmp(at + 1, c.image_digest) != 0 || strncmp(c.image_digest, "sha256:", 7) != 0 ||
            strlen(c.image_digest) != 71)
                abort();
        /* untagged: no ':' in the name's last component */
        last = memrchr(c.image, '/', (size_t) (at - c.image));
        last = last ? last + 1 : c.image;
        if (memchr(last, ':', (size_t) (at - last)))
                abort();
        if (strncmp(c.host_key, "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI", 37) != 0)
                abort();
        if (glove_remote_ssh_config_text(&c, "/run/user/0/glove/remote/known_hosts", &config) < 0 ||
            glove_remote_known_hosts_text(&c, &known) < 0)
                abort();
        if (!strstr(config, "\n  GlobalKnownHostsFile none\n") || !strstr(config, "\n  HostKeyAlgorithms ssh-ed25519\n") ||
            !strstr(config, "\n  ControlPath none\n") || strchr(known, '\n') != known + strlen(known) - 1)
                abort();
        return 0;
}

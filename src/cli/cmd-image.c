/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* kubemount pull, images, rmi, image import: VCS images in the store. */
#include <getopt.h>

#include "cli.h"
#include "imageref.h"
#include "vcs-map.h"

#define IMAGE_OPTIONS_HELP                                                                                             \
        "  --insecure-registry HOST:PORT   allow plain HTTP to that registry (repeatable; also\n"                      \
        "                         \"insecureRegistries\" in /etc/kubemount/config.json)\n"                             \
        "  --certs-dir DIR        extra CAs: DIR/HOST:PORT/ca.crt (besides /etc/containers/certs.d\n"                  \
        "                         and /etc/docker/certs.d)\n"                                                          \
        "  --authfile FILE        docker-style config.json with credentials (repeatable; default:\n"                   \
        "                         $REGISTRY_AUTH_FILE, ~/.docker/config.json,\n"                                       \
        "                         /var/lib/kubelet/config.json)\n"                                                     \
        "  --platform OS/ARCH[/VARIANT]   the image to take from a multi-platform index\n"

#define MAX_SIZE_HELP                                                                                                  \
        "  --max-image-size SIZE  refuse an image over SIZE bytes, packed or unpacked\n"                               \
        "                         (K, M, G, T: powers of 1024; default 16G; also\n"                                    \
        "                         \"maxImageSize\" in /etc/kubemount/config.json)\n"

enum { OPT_INSECURE = 0x100, OPT_CERTS, OPT_AUTHFILE, OPT_PLATFORM, OPT_JSON, OPT_MAX_SIZE };

const struct option cli_image_long_options[] = {
        { "insecure-registry", required_argument, NULL, OPT_INSECURE },
        { "certs-dir", required_argument, NULL, OPT_CERTS },
        { "authfile", required_argument, NULL, OPT_AUTHFILE },
        { "platform", required_argument, NULL, OPT_PLATFORM },
        {},
};

/* "1048576", "512M", "16G", "1TiB": bytes, K/M/G/T being powers of 1024. */
static int parse_size(const char *text, uint64_t *ret) {
        static const char units[] = "KMGT";
        unsigned long long n;
        const char *u;
        char *end;

        if (!text || *text < '0' || *text > '9')
                return -EINVAL;
        errno = 0;
        n = strtoull(text, &end, 10);
        if (errno != 0)
                return -EINVAL;
        if (*end && (u = strchr(units, *end & ~0x20))) {
                for (const char *p = units; p <= u; p++) {
                        if (n > UINT64_MAX / 1024)
                                return -ERANGE;
                        n *= 1024;
                }
                end++;
                if (streq(end, "iB") || streq(end, "B"))
                        end += strlen(end);
        }
        if (*end)
                return -EINVAL;
        *ret = n;
        return 0;
}

static int set_max_size(struct km_image_options *o, const char *text) {
        uint64_t n = 0;
        int r = parse_size(text, &n);

        if (r < 0 || n == 0)
                return -EINVAL;
        km_image_options_set_max_image_size(o, n);
        return 0;
}

/*
 * The node's settings, if any: $KUBEMOUNT_CONFIG or /etc/kubemount/config.json,
 * {"insecureRegistries": ["HOST:PORT", ...], "certsDir": "DIR", "authFiles": [...],
 *  "maxImageSize": BYTES or "SIZE"}.
 */
static int read_config(struct km_image_options *o) {
        const char *path = getenv("KUBEMOUNT_CONFIG") ?: "/etc/kubemount/config.json";
        json_error_t jerr;
        json_t *c, *v;
        size_t i;
        int r = 0;

        /* No file, no jansson: every mount reads this (its routing may need an image). */
        if (access(path, F_OK) < 0 && errno == ENOENT)
                return 0;
        c = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
        if (!c)
                return cli_error("%s: %s", path, jerr.text), -EINVAL;
        json_array_foreach(json_object_get(c, "insecureRegistries"), i, v) if (r == 0 && json_is_string(v)) r =
                km_image_options_add_insecure_registry(o, json_string_value(v));
        json_array_foreach(json_object_get(c, "authFiles"), i, v) if (r == 0 && json_is_string(v)) r =
                km_image_options_add_auth_file(o, json_string_value(v));
        if (r == 0 && json_is_string(json_object_get(c, "certsDir")))
                r = km_image_options_set_certs_dir(o, json_string_value(json_object_get(c, "certsDir")));
        v = json_object_get(c, "maxImageSize");
        if (r == 0 && json_is_integer(v) && json_integer_value(v) > 0)
                km_image_options_set_max_image_size(o, (uint64_t)json_integer_value(v));
        else if (r == 0 && v) {
                r = json_is_string(v) ? set_max_size(o, json_string_value(v)) : -EINVAL;
                if (r < 0) {
                        cli_error("%s: maxImageSize: expected a size (bytes, or with K, M, G or T)", path);
                        json_decref(c);
                        return r;
                }
        }
        json_decref(c);
        if (r < 0)
                cli_error("%s: invalid settings", path);
        return r;
}

struct km_image_options *cli_image_options_new(void) {
        struct km_image_options *o = km_image_options_new();

        if (o && read_config(o) < 0) {
                km_image_options_free(o);
                return NULL;
        }
        return o;
}

int cli_image_option(struct km_image_options *o, int c, const char *arg) {
        switch (c) {
        case OPT_INSECURE:
                return km_image_options_add_insecure_registry(o, arg);
        case OPT_CERTS:
                return km_image_options_set_certs_dir(o, arg);
        case OPT_AUTHFILE:
                return km_image_options_add_auth_file(o, arg);
        case OPT_PLATFORM:
                return km_image_options_set_platform(o, arg);
        }
        return 1; /* not an image option */
}

/* Options of pull and image import: the image ones, --json, -q, --help. */
static int parse(struct cli *cli, struct km_image_options *o, int argc, char **argv, const char *help, bool *quiet) {
        static const struct option extra[] = {
                { "json", no_argument, NULL, OPT_JSON },
                { "quiet", no_argument, NULL, 'q' },
                { "help", no_argument, NULL, 'h' },
                { "max-image-size", required_argument, NULL, OPT_MAX_SIZE },
        };
        struct option opts[ELEMENTSOF(extra) + 5];
        int c, r;

        memcpy(opts, extra, sizeof(extra));
        memcpy(opts + ELEMENTSOF(extra), cli_image_long_options, sizeof(struct option) * 5);
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+hq", opts, NULL)) >= 0) {
                if (c == 'h') {
                        fputs(help, stdout);
                        return 1;
                }
                if (c == 'q' || c == OPT_JSON) {
                        *(c == 'q' ? quiet : &cli->json) = true;
                        continue;
                }
                r = c == '?' ? -EINVAL : c == OPT_MAX_SIZE ? set_max_size(o, optarg) : cli_image_option(o, c, optarg);
                if (r != 0) {
                        cli_error("%s: invalid option '%s'", argv[0], argv[optind - 1]);
                        return -EINVAL;
                }
        }
        return 0;
}

/* Prints a record: JSON, or "REF MANIFEST ROOTFS". */
static int print_record(struct cli *cli, const char *json, bool quiet) {
        json_t *rec = json_loads(json, 0, NULL);

        if (!rec)
                return -ENOMEM;
        if (cli->json)
                return cli_print_json(rec);
        if (!quiet)
                printf("%s %s\n", json_string_value(json_object_get(rec, "ref")) ?: "",
                       json_string_value(json_object_get(rec, "manifest")) ?: "");
        json_decref(rec);
        return 0;
}

int cmd_pull(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount pull [OPTIONS] REF\n"
                "\n"
                "Pull an image from its registry into the store (verified by sha256) and\n"
                "unpack it for 'kubemount run --image REF'.  REF is [REGISTRY/]NAME[:TAG][@DIGEST];\n"
                "a tag is asked for again, a digest is pinned and verified.\n"
                "\n" IMAGE_OPTIONS_HELP MAX_SIZE_HELP
                "  -q, --quiet            print nothing on success\n"
                "  --json                 print the image's record\n"
                "\n"
                "Exit status: 0 pulled, 1 failed, 2 usage.\n";
        struct km_image_options *o = cli_image_options_new();
        _cleanup_free_ char *json = NULL;
        struct km_error err = {};
        bool quiet = false;
        int r = o ? parse(cli, o, argc, argv, help, &quiet) : -ENOMEM;

        if (r == 0 && optind != argc - 1) {
                cli_error("pull: exactly one image reference expected");
                r = -EINVAL;
        }
        if (r != 0) {
                km_image_options_free(o);
                return r > 0 ? 0 : EXIT_USAGE;
        }
        km_image_options_set_progress_fd(o, STDERR_FILENO);
        r = km_image_pull(cli->host, o, argv[optind], &json, &err);
        km_image_options_free(o);
        if (r < 0) {
                cli_error("pull %s: %s", argv[optind], err.message);
                return EXIT_NO;
        }
        return print_record(cli, json, quiet) < 0 ? EXIT_NO : 0;
}

int cli_pull_all(struct cli *cli, int argc, char **argv, const struct vcs_map *m) {
        static const char help[] =
                "Usage: kubemount [MAPPING OPTIONS] vcs pull [OPTIONS] [TYPE...]\n"
                "\n"
                "Pull every image the filesystem type table maps (kubemount vcs list), or\n"
                "those of the TYPEs named, once each, as kubemount pull does: for a node's\n"
                "bootstrap, so that no mount waits on a registry (routed mounts take images\n"
                "from the store only).  Air-gapped nodes import the same images with\n"
                "kubemount image import instead.\n"
                "\n" IMAGE_OPTIONS_HELP MAX_SIZE_HELP
                "  -q, --quiet            print nothing on success\n"
                "  --json                 print the records, as a JSON array\n"
                "\n"
                "Exit status: 0 every image pulled, 1 one or more failed (each named), 2 usage.\n";
        _cleanup_(km_image_options_freep) struct km_image_options *o = cli_image_options_new();
        _cleanup_(km_strv_freep) char **refs = NULL;
        json_t *records = json_array();
        struct km_error err = {};
        bool quiet = false;
        int r = o && records ? parse(cli, o, argc, argv, help, &quiet) : -ENOMEM, rc = 0;

        if (r == 0 && (r = vcs_map_images(m, argv + optind, &refs, &err)) < 0)
                cli_error("vcs pull: %s", err.message);
        if (r != 0) {
                json_decref(records);
                return r > 0 ? 0 : EXIT_USAGE;
        }
        km_image_options_set_progress_fd(o, STDERR_FILENO);
        for (char *const *ref = refs; *ref; ref++) {
                _cleanup_free_ char *json = NULL;

                if (km_image_pull(cli->host, o, *ref, &json, &err) < 0) {
                        cli_error("vcs pull %s: %s", *ref, err.message);
                        rc = EXIT_NO;
                } else if (cli->json)
                        json_array_append_new(records, json_loads(json, 0, NULL));
                else if (print_record(cli, json, quiet) < 0)
                        rc = EXIT_NO;
        }
        if (cli->json)
                return cli_print_json(records) < 0 ? EXIT_NO : rc;
        json_decref(records);
        return rc;
}

int cmd_image(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount image import [OPTIONS] SOURCE [NAME[:TAG]]\n"
                "\n"
                "Import an image for air-gapped nodes.  SOURCE is oci:DIR[:NAME] (an OCI image\n"
                "layout), oci-archive:FILE[:NAME] (one as a tar file) or rootfs:TARFILE (a root\n"
                "filesystem tarball, made a one-layer image; NAME required).  NAME defaults to\n"
                "the layout's own reference name.  A NAME@sha256:DIGEST must pin what is\n"
                "imported: the image manifest's digest or, for a layout entry that is an index,\n"
                "the index's (as pull records it); any other digest is refused, nothing recorded.\n"
                "\n" MAX_SIZE_HELP
                "  -q, --quiet            print nothing on success\n"
                "  --json                 print the image's record\n";
        struct km_image_options *o = NULL;
        _cleanup_free_ char *json = NULL;
        struct km_error err = {};
        bool quiet = false;
        int r;

        if (argc < 2 || !streq(argv[1], "import")) {
                if (argc >= 2 && (streq(argv[1], "--help") || streq(argv[1], "-h"))) {
                        fputs(help, stdout);
                        return 0;
                }
                cli_error("image: expected 'import' (see kubemount image --help)");
                return EXIT_USAGE;
        }
        o = cli_image_options_new();
        r = o ? parse(cli, o, argc - 1, argv + 1, help, &quiet) : -ENOMEM;
        if (r == 0 && (optind + 1 > argc - 1 || optind + 2 < argc - 1)) {
                cli_error("image import: SOURCE [NAME] expected");
                r = -EINVAL;
        }
        if (r != 0) {
                km_image_options_free(o);
                return r > 0 ? 0 : EXIT_USAGE;
        }
        r = km_image_import(cli->host, o, argv[1 + optind], optind + 1 < argc - 1 ? argv[2 + optind] : NULL, &json,
                            &err);
        km_image_options_free(o);
        if (r < 0) {
                cli_error("image import %s: %s", argv[1 + optind], err.message);
                return EXIT_NO;
        }
        return print_record(cli, json, quiet) < 0 ? EXIT_NO : 0;
}

int cmd_images(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount images [--json]\n"
                "\n"
                "The images in the store: reference, manifest digest, source, root filesystem.\n";
        struct km_image_options *o = cli_image_options_new();
        _cleanup_free_ char *json = NULL;
        struct km_error err = {};
        int optind_ret, r = o ? cli_simple_options(cli, argc, argv, help, &optind_ret) : -ENOMEM;
        json_t *doc, *e;
        size_t i;

        if (r == 0)
                r = km_image_list(cli->host, o, &json, &err) < 0 ? -1 : 0;
        km_image_options_free(o);
        if (r != 0) {
                if (r == -1)
                        cli_error("images: %s", err.message);
                return r > 0 ? 0 : EXIT_USAGE;
        }
        doc = json_loads(json, 0, NULL);
        if (cli->json)
                return cli_print_json(doc) < 0 ? EXIT_USAGE : 0;
        printf("%-48s %-19s %-24s %s\n", "REFERENCE", "MANIFEST", "SOURCE", "CREATED");
        json_array_foreach(json_object_get(doc, "images"), i, e)
                printf("%-48s %-19.19s %-24s %s\n", json_string_value(json_object_get(e, "ref")) ?: "?",
                       json_string_value(json_object_get(e, "manifest")) ?: "?",
                       json_string_value(json_object_get(e, "source")) ?: "",
                       json_string_value(json_object_get(e, "created")) ?: "");
        json_decref(doc);
        return 0;
}

/* What the agent knows of its containers ({"containers": [...]}), or an empty list without an agent. */
static json_t *agent_containers(struct cli *cli) {
        struct km_agent *a = NULL;
        _cleanup_free_ char *text = NULL;
        json_t *doc = NULL;

        if (km_agent_new(cli->host, NULL, &a) >= 0 && km_vcs_list(a, &text, NULL) >= 0)
                doc = json_loads(text, 0, NULL);
        km_agent_free(a);
        return doc ?: json_pack("{s:[]}", "containers");
}

/* The root filesystems of those containers: rmi must not take them away. */
static char **live_rootfs(json_t *doc) {
        char **keep = calloc(json_array_size(json_object_get(doc, "containers")) + 1, sizeof(char *));
        size_t i, n = 0;
        json_t *e;

        json_array_foreach(json_object_get(doc, "containers"), i, e) {
                const char *rootfs = json_string_value(json_object_get(e, "rootfs"));
                if (keep && rootfs && !(keep[n++] = strdup(rootfs))) {
                        km_strv_free(keep);
                        return NULL;
                }
        }
        return keep;
}

/* Whether a running container serves a routed mount (only then does rmi need the store's records). */
static bool serves_mounts(json_t *containers) {
        json_t *e;
        size_t i;

        json_array_foreach(json_object_get(containers, "containers"), i, e) {
                if (json_object_get(e, "mount") && json_is_true(json_object_get(e, "running")))
                        return true;
        }
        return false;
}

/*
 * A running container that serves a routed mount from ref's image (by its
 * reference, or by the manifest the store's records give ref), or NULL: a
 * mapping change takes effect by new mounts, never by pulling the image
 * from under one.  Borrowed from containers.
 */
static json_t *serving_container(json_t *images, json_t *containers, const char *ref) {
        struct image_ref parsed;
        _cleanup_free_ char *canonical = NULL;
        const char *manifest = NULL;
        json_t *e;
        size_t i;

        if (image_ref_parse(ref, &parsed, NULL) < 0)
                return NULL;
        canonical = image_ref_format(&parsed);
        image_ref_done(&parsed);
        if (!canonical)
                return NULL;
        json_array_foreach(json_object_get(images, "images"), i, e) {
                if (streq(json_string_value(json_object_get(e, "ref")) ?: "", canonical))
                        manifest = json_string_value(json_object_get(e, "manifest"));
        }
        json_array_foreach(json_object_get(containers, "containers"), i, e) {
                const char *image = json_string_value(json_object_get(e, "image"));
                const char *digest = json_string_value(json_object_get(e, "digest"));

                if (json_object_get(e, "mount") && json_is_true(json_object_get(e, "running")) &&
                    ((image && streq(image, canonical)) || (manifest && digest && streq(digest, manifest))))
                        return e;
        }
        return NULL;
}

int cmd_rmi(struct cli *cli, int argc, char **argv) {
        static const char help[] =
                "Usage: kubemount rmi REF...\n"
                "\n"
                "Remove images from the store, and every blob and root filesystem that no\n"
                "other image and no container (running or exited) uses.  An image that serves\n"
                "a routed mount (kubemount ps shows which) is refused, exit 1: unmount first.\n";
        struct km_image_options *o = cli_image_options_new();
        char **keep = NULL;
        json_t *containers = NULL, *images = NULL;
        int optind_ret, r = o ? cli_simple_options(cli, argc, argv, help, &optind_ret) : -ENOMEM, rc = 0;

        if (r == 0 && optind_ret >= argc) {
                cli_error("rmi: an image reference expected");
                r = -EINVAL;
        }
        if (r != 0) {
                km_image_options_free(o);
                return r > 0 ? 0 : EXIT_USAGE;
        }
        containers = agent_containers(cli);
        keep = live_rootfs(containers);
        if (serves_mounts(containers)) {
                _cleanup_free_ char *text = NULL;
                if (km_image_list(cli->host, o, &text, NULL) >= 0)
                        images = json_loads(text, 0, NULL);
        }
        for (int i = optind_ret; i < argc; i++) {
                struct km_error err = {};
                json_t *serving = serving_container(images, containers, argv[i]);

                if (serving) {
                        json_t *m = json_object_get(serving, "mount");
                        cli_error("rmi %s: the image serves the mount %s (container %s): unmount it first", argv[i],
                                  json_string_value(json_object_get(m, "target")) ?: "?",
                                  json_string_value(json_object_get(serving, "name")) ?: "?");
                        rc = EXIT_NO;
                        continue;
                }
                if (!keep) {
                        cli_error("rmi %s: out of memory", argv[i]);
                        rc = EXIT_NO;
                } else if (km_image_remove(cli->host, o, argv[i], keep, &err) < 0) {
                        cli_error("rmi %s: %s", argv[i], err.message);
                        rc = EXIT_NO;
                }
        }
        km_strv_free(keep);
        json_decref(images);
        json_decref(containers);
        km_image_options_free(o);
        return rc;
}

/* ltbench: the dispatcher. `ltbench <name> [args]` runs the executable
 * ltbench-<name> that sits beside this one, so each experiment stays its own
 * small program and this one only finds and starts it. What there is to run
 * comes from the registry. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"
#include "core/kernels.h"
#include "core/provenance.h"
#include "registry.h"



/* Folder holding this executable, from /proc/self/exe. */
static int own_folder(char *out, size_t size)
{
    ssize_t len = readlink("/proc/self/exe", out, size - 1);
    if (len <= 0)
        return -1;
    out[len] = '\0';
    char *slash = strrchr(out, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    return 0;
}

static int program_path(char *out, size_t size, const char *folder, const char *name)
{
    int n = snprintf(out, size, "%s/ltbench-%s", folder, name);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

static void usage(FILE *out, const char *folder)
{
    fprintf(out,
            "ltbench %s: attention benchmarks from \"Transformers are RNNs\"\n"
            "(Katharopoulos et al., 2020): softmax, linear and Linformer attention.\n\n"
            "usage: ltbench <experiment|tool> [flags]     (each takes --help)\n"
            "       ltbench --version        version and the kernel set in use\n"
            "       ltbench --kernel-sets    the kernel sets this build has and this CPU runs,\n"
            "                                best first, one a line (LTBENCH_KERNELS=NAME picks one)\n\n",
            lt_version_string());
    for (int i = 0; i < bench_registry_count; i++) {
        char path[PATH_MAX];
        int built = folder != NULL &&
                    program_path(path, sizeof path, folder, bench_registry[i]->name) == 0 &&
                    access(path, X_OK) == 0;
        fprintf(out, "  %-10s %s%s\n", bench_registry[i]->name, bench_registry[i]->summary,
                built ? "" : " [not yet available]");
    }
}

int main(int argc, char **argv)
{
    char folder[PATH_MAX];
    int have_folder = own_folder(folder, sizeof folder) == 0;

    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout, have_folder ? folder : NULL);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("ltbench %s\nkernel set: %s (usable here: %s; LTBENCH_KERNELS=NAME picks one)\n",
               lt_version_string(), lt_kernels_name(lt_kernels_active()),
               lt_kernels_usable_list());
        return 0;
    }
    if (strcmp(argv[1], "--kernel-sets") == 0) {
        for (const char *at = lt_kernels_usable_list(); *at != '\0';) {
            size_t len = strcspn(at, ",");
            printf("%.*s\n", (int)len, at);
            at += len;
            at += strspn(at, ", ");
        }
        return 0;
    }

    const char *name = argv[1];
    int known = 0;
    for (int i = 0; i < bench_registry_count; i++)
        known |= strcmp(bench_registry[i]->name, name) == 0;
    if (!known) {
        const char *names[64];
        int named = bench_registry_count < 64 ? bench_registry_count : 64;
        for (int i = 0; i < named; i++)
            names[i] = bench_registry[i]->name;
        const char *near = lt_cli_closest(name, names, named);
        if (near != NULL)
            fprintf(stderr, "ltbench: error: unknown experiment or tool '%s' (did you mean "
                            "'%s'?)\n\n",
                    name, near);
        else
            fprintf(stderr, "ltbench: error: unknown experiment or tool '%s'\n\n", name);
        usage(stderr, have_folder ? folder : NULL);
        return 2;
    }
    char path[PATH_MAX];
    if (!have_folder || program_path(path, sizeof path, folder, name) != 0) {
        fprintf(stderr, "ltbench: error: cannot locate the folder of this executable\n");
        return 1;
    }
    if (access(path, X_OK) != 0) {
        fprintf(stderr, "ltbench: error: '%s' is not available in this build yet (%s is missing)\n",
                name, path);
        return 2;
    }
    argv[1] = path;
    execv(path, argv + 1);
    fprintf(stderr, "ltbench: error: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}

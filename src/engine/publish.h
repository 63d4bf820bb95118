/*
 * publish.h - the one way wasp creates files and directories.
 *
 * A file is published whole or not at all: written under a fresh hidden
 * temporary name in its directory (opened O_CREAT|O_EXCL|O_NOFOLLOW
 * relative to the directory's descriptor, so a planted file or symlink is
 * never written through), then renamed over its name within that same
 * directory. Directories are made with mkdir and opened O_NOFOLLOW. Used
 * by the engine (profiles, manifests) and the CLI (run directory,
 * reports). Normal context only.
 */
#ifndef WASP_PUBLISH_H
#define WASP_PUBLISH_H

#include <stddef.h>
#include <sys/types.h>

/* Profiles, manifests and directories wasp creates: owner only (command
 * lines and source paths are in them). */
#define PUBLISH_FILE_MODE 0600
#define PUBLISH_DIR_MODE 0700

typedef struct publish_tmp {
    int dirfd;          /* borrowed: the caller keeps it open until finish */
    char name[256];     /* the final name, inside dirfd */
    char tmp[300];      /* the temporary name, inside dirfd */
} publish_tmp;

/* Opens a new temporary file for name in dirfd; returns its descriptor
 * (write, close-on-exec), or -1 with errno set. */
int publish_open(publish_tmp *t, int dirfd, const char *name, mode_t mode);

/* After the caller closed the descriptor: renames the temporary over the
 * name when ok, else (or when the rename fails) removes it. 0, or -1 with
 * errno set. */
int publish_finish(publish_tmp *t, int ok);

/* Writes the whole of buf as name in dirfd. 0, or -1 with errno set. */
int publish_buffer(int dirfd, const char *name, const void *buf, size_t len, mode_t mode);

/* Opens the directory path for publishing, refusing a symlink as its last
 * component (O_NOFOLLOW). Returns the descriptor or -1 with errno set
 * (ELOOP or ENOTDIR for a symlink). */
int publish_open_dir(const char *path);

/* Splits path into its directory ("." when none) and its last component
 * (into name). Returns the directory's descriptor, opened O_NOFOLLOW when
 * nofollow (a run's own pid directory) and following links otherwise (the
 * directory a user named for a report), or -1 with errno set
 * (ENAMETOOLONG when name cannot hold it). */
int publish_open_parent(const char *path, int nofollow, char *name, size_t namelen);

/* Keeps the directory path open (one per process: a run's pid directory;
 * a later call replaces it): publish_open_parent of a path inside it then
 * opens it through that descriptor, so that files land there after the
 * process chroots or changes directory. 0, or -1 (paths are used then). */
int publish_hold_dir(const char *path);

/* Makes uid the owner of the held directory (a process about to drop its
 * privileges must still make files in it). 0, or -1. */
int publish_give_held_dir(uid_t uid);

/* Opens the existing file path for appending (O_NOFOLLOW), through the
 * held directory when path is inside it. The descriptor, or -1. */
int publish_open_append(const char *path);

/* mkdir -p with mode for every directory it creates; an existing last
 * component must be a real directory (not a symlink). 0, or -1 with errno
 * set (ENOTDIR when something else is in the way). */
int publish_mkdirs(const char *path, mode_t mode);

#endif

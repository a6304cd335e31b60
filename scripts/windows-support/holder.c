/* holder.exe PATH delete|keep: holds the file PATH open as another Windows program would (an
 * editor, a scanner), for the Wine tests of a switch meeting such a file
 * (crates/git-par/tests/wine.rs). It opens PATH for reading, sharing reading and writing, and
 * deletion too with `delete` (FILE_SHARE_DELETE) but not with `keep`; prints "held" once it holds
 * the file; and keeps it open until it reads a line on its standard input or that input closes.
 * The test synchronises through those two pipes, never by waiting a while. Wine enforces share
 * modes only between its own processes: the holder runs under the same wineserver as git-par.exe.
 * Built by scripts/windows; never shipped. */
#include <windows.h>
#include <stdio.h>
#include <wchar.h>

/* Writes `text` whole to the standard output, unbuffered: the test waits for it. */
static void say(const char *text)
{
    DWORD written;
    WriteFile(GetStdHandle(STD_OUTPUT_HANDLE), text, (DWORD)strlen(text), &written, NULL);
}

/* Returns once a line or the end of the standard input has been read (or reading failed: the
 * pipe closed). */
static void wait_for_a_line(void)
{
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    char byte;
    DWORD got;
    while (ReadFile(in, &byte, 1, &got, NULL) && got == 1 && byte != '\n')
        ;
}

int wmain(int argc, wchar_t **argv)
{
    DWORD share = FILE_SHARE_READ | FILE_SHARE_WRITE;
    HANDLE file;
    if (argc != 3 || (wcscmp(argv[2], L"delete") != 0 && wcscmp(argv[2], L"keep") != 0)) {
        fprintf(stderr, "usage: holder PATH delete|keep\n");
        return 2;
    }
    if (wcscmp(argv[2], L"delete") == 0)
        share |= FILE_SHARE_DELETE;
    file = CreateFileW(argv[1], GENERIC_READ, share, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL,
                       NULL);
    if (file == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "holder: cannot open %ls: error %lu\n", argv[1], GetLastError());
        return 1;
    }
    say("held\n");
    wait_for_a_line();
    CloseHandle(file);
    return 0;
}

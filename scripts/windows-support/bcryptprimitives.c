/* A stand-in for Windows' bcryptprimitives.dll, which Wine 8.0 lacks and Rust's standard library
 * (1.78 and later) imports for ProcessPrng: without it every Rust program fails to start under that
 * Wine (status c0000135). It fills the buffer from advapi32's RtlGenRandom (SystemFunction036),
 * which Wine has. Built and copied into the Wine prefix by scripts/windows; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG chunk = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        len -= chunk;
    }
    return TRUE;
}

# scripts/emulate_bwd_grads_addr.py — the address identities GDN_BWD_WG_ADDR (kernels/gdn_bwd_grads_tiles.cuh,
# gdn_bwd_grads.cu) rests on, checked exhaustively in integers against the engine's forms: every thread's fragment
# offsets (Frag::cd, Frag::cc: one offset, XOR (j << 3) for the n-tile, + 512 for the second row) against Tile::at;
# every cp.async piece of copy_tile_rows and of the v / dO rows (a thread's first piece plus RP rows a step) against
# copy_tile_to's loop over i = tid, tid + 512, ...; every wgmma descriptor's low word formed once and advanced by
# kmajor_step / mnmajor_step against kmajor / mnmajor rebuilt each k step, at every 1024-aligned tile base the
# kernel's 227 KiB can hold. Exits 1 on the first mismatch; prints one line a family.
import sys

C, D, GT = 64, 128, 512


def tile_at(rows, r, c):
    """Tile<rows, *>::at under GDN_BWD_GRADS_WG: 64-column panels of `rows` rows of 128 bytes, 16-byte pieces
    XOR-swizzled by the row's index mod 8 (elements)."""
    return (c >> 6) * (rows * 64) + r * 64 + ((((c & 63) >> 3) ^ (r & 7)) << 3) + (c & 7)


def fail(msg):
    print("MISMATCH:", msg)
    sys.exit(1)


# Frag: warp w of 16, band = w & 3 (m0 = 16 band), quarter = w >> 2; lane -> g = lane >> 2, t = lane & 3.
n = 0
for w in range(16):
    m0, quarter = 16 * (w & 3), w >> 2
    for lane in range(32):
        g, t = lane >> 2, lane & 3
        fcd = ((quarter >> 1) << 12) + (m0 + g) * 64 + ((((quarter & 1) << 2) ^ g) << 3) + 2 * t
        fcc = (m0 + g) * 64 + (((quarter << 1) ^ g) << 3) + 2 * t
        for hh in range(2):
            for j in range(4):  # [C][D]: NTD = D / 32 n-tiles of 8 columns
                want = tile_at(C, m0 + g + 8 * hh, (D // 4) * quarter + 8 * j + 2 * t)
                if (fcd ^ (j << 3)) + hh * 512 != want:
                    fail(f"cd w={w} lane={lane} hh={hh} j={j}")
                n += 1
            for j in range(2):  # [C][C]: 16 columns a warp
                want = tile_at(C, m0 + g + 8 * hh, 16 * quarter + 8 * j + 2 * t)
                if (fcc ^ (j << 3)) + hh * 512 != want:
                    fail(f"cc w={w} lane={lane} hh={hh} j={j}")
                n += 1
print(f"fragment offsets (Frag::cd, Frag::cc)  {n} checked")


def pieces_loop(rows, cols):
    """copy_tile_to's pieces: thread tid -> [(smem element offset, global element offset)]."""
    out = {tid: [] for tid in range(GT)}
    p = cols // 8
    for i in range(rows * p):
        r, c = i // p, (i % p) * 8
        out[i % GT].append((tile_at(rows, r, c), r * cols + c))
    return out


def pieces_rows(rows, cols):
    """copy_tile_rows<T, rows, cols>'s pieces."""
    p = cols // 8
    rp, nn = GT // p, rows * p // GT
    assert rp % 8 == 0 and (rows * p) % GT == 0
    out = {}
    for tid in range(GT):
        r0, c = tid // p, (tid % p) * 8
        d, s = tile_at(rows, r0, c), r0 * cols + c
        out[tid] = [(d + it * rp * 64, s + it * rp * cols) for it in range(nn)]
    return out


n = 0
for rows, cols in ((C, D), (D, D), (C, C)):
    a, b = pieces_loop(rows, cols), pieces_rows(rows, cols)
    for tid in range(GT):
        if a[tid] != b[tid]:
            fail(f"copy_tile_rows [{rows}][{cols}] tid={tid}: {a[tid]} vs {b[tid]}")
        n += len(a[tid])
# v / dO rows: the loop's row r = i / 16, column (i % 16) 8, zero-filled from row n_rows (the token then row 0).
for n_rows in (1, 31, 32, 33, 63, 64):
    for tid in range(GT):
        want = []
        for i in range(tid, C * 16, GT):
            r, c = i // 16, (i % 16) * 8
            want.append((tile_at(C, r, c), r if r < n_rows else 0, 16 if r < n_rows else 0, c))
        r0, c = tid >> 4, (tid & 15) * 8
        got = []
        for it in range(2):
            r = r0 + 32 * it
            got.append((tile_at(C, r0, c) + it * 32 * 64, r if r < n_rows else 0, 16 if r < n_rows else 0, c))
        if want != got:
            fail(f"v / dO rows n={n_rows} tid={tid}")
        n += 2
print(f"cp.async pieces (copy_tile_rows, v / dO rows)  {n} checked")


def kmajor(base, kk, panel, row0):
    a = base + (kk >> 2) * panel + (kk & 3) * 32 + row0 * 128
    return ((a & 0x3FFFF) >> 4) | ((16 >> 4) << 16)


def mnmajor(base, kk, panel, col0):
    a = base + kk * 2048 + (col0 >> 6) * panel + (col0 & 63) * 2
    return ((a & 0x3FFFF) >> 4) | ((panel >> 4) << 16)


def kmajor_new(base, kk, panel, row0):
    lo = (((base + row0 * 128) & 0x3FFFF) >> 4) | ((16 >> 4) << 16)
    return lo + (((kk >> 2) * panel + (kk & 3) * 32) >> 4)


def mnmajor_new(base, kk, panel, col0):
    lo = (((base + (col0 >> 6) * panel + (col0 & 63) * 2) & 0x3FFFF) >> 4) | ((panel >> 4) << 16)
    return lo + ((kk * 2048) >> 4)


SMEM = 227 * 1024  # the most shared memory a CTA has on sm_90
n = 0
# The tiles [C][D], [D][D], [C][C]: panels of `rows` x 128 bytes, `cols` / 64 of them; K = the rows (MN-major) or
# the columns (K-major) the products step through.
for rows, cols in ((C, D), (D, D), (C, C)):
    panel = rows * 128
    size = (cols // 64) * panel
    kd = cols
    for base in range(0, SMEM - size + 1, 1024):
        for kk in range(kd // 16):
            for off in (0, 16, 32, 48):  # row0 = n0 = 16 quarter (K-major B)
                if kmajor(base, kk, panel, off) != kmajor_new(base, kk, panel, off):
                    fail(f"kmajor rows={rows} base={base} kk={kk} row0={off}")
                n += 1
        for kk in range(rows // 16):
            for col0 in (0, 16, 32, 48, 64, 96)[: 4 if cols == 64 else 6]:  # n0 = 16 quarter, nd0 = 32 quarter
                if mnmajor(base, kk, panel, col0) != mnmajor_new(base, kk, panel, col0):
                    fail(f"mnmajor rows={rows} base={base} kk={kk} col0={col0}")
                n += 1
print(f"wgmma descriptors (kmajor_lo / mnmajor_lo + steps)  {n} checked")

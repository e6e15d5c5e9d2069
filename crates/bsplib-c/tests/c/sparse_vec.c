/* The paper's all_gather_sparse_vec (BSMP): the nonzeros of a block
 * distributed vector are broadcast to every process as messages tagged
 * with their global index. Element g of the dense vector is g+0.5 when g
 * is a multiple of 3, else 0; every process checks what it gathered. */
#include "check.h"

int all_gather_sparse_vec(float *dense, int n_over_p,
                          float **sparse_out,
                          int **sparse_ivec_out) {
    int global_idx, i, j, tag_size,
        nonzeros, nonzeros_size, status, *sparse_ivec = NULL;
    float *sparse = NULL;

    tag_size = sizeof(int);
    bsp_set_tagsize(&tag_size);
    bsp_sync();

    for (i = 0; i < n_over_p; i++)
        if (dense[i] != 0.0) {
            global_idx = (n_over_p * bsp_pid() + i);
            for (j = 0; j < bsp_nprocs(); j++)
                bsp_send(j, &global_idx, &dense[i], sizeof(float));
        }
    bsp_sync();

    bsp_qsize(&nonzeros, &nonzeros_size);
    if (nonzeros > 0) {
        sparse = calloc(nonzeros, sizeof(float));
        sparse_ivec = calloc(nonzeros, sizeof(int));
        if (sparse == NULL || sparse_ivec == NULL)
            bsp_abort("Unable to allocate memory");
        for (i = 0; i < nonzeros; i++) {
            bsp_get_tag(&status, &sparse_ivec[i]);
            if (status != sizeof(float))
                bsp_abort("Should never get here");
            bsp_move(&sparse[i], sizeof(float));
        }
    }
    bsp_set_tagsize(&tag_size);
    *sparse_out = sparse;
    *sparse_ivec_out = sparse_ivec;
    return nonzeros;
}

int main(void) {
    bsp_begin(bsp_nprocs());
    int p = bsp_nprocs(), s = bsp_pid(), i, g, n_over_p = 7, n = n_over_p * p;
    float dense[7];
    float *sparse;
    int *ivec, nonzeros, expected = 0;
    int *seen = calloc(n, sizeof(int));
    CHECK(seen != NULL);
    for (i = 0; i < n_over_p; i++) {
        g = s * n_over_p + i;
        dense[i] = (g % 3 == 0) ? (float)g + 0.5f : 0.0f;
    }
    for (g = 0; g < n; g += 3)
        expected++;
    nonzeros = all_gather_sparse_vec(dense, n_over_p, &sparse, &ivec);
    CHECK_EQ(nonzeros, expected);
    for (i = 0; i < nonzeros; i++) {
        g = ivec[i];
        CHECK(0 <= g && g < n && g % 3 == 0);
        CHECK(sparse[i] == (float)g + 0.5f);
        CHECK_EQ(seen[g], 0);
        seen[g] = 1;
    }
    bsp_sync(); /* the restored tag size takes effect */
    free(sparse);
    free(ivec);
    free(seen);
    report_ok();
    bsp_end();
    return 0;
}

// dequant_oracle: ggml's reference dequantisers as a filter, for stdiff's tests.
// Input on stdin, repeated: uint32 type, uint32 element count, then the blocks' bytes
// (ggml_row_size(type, count)). Output on stdout: count float32 values per input.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "ggml.h"

int main(void) {
    uint32_t hdr[2];
    while (fread(hdr, sizeof hdr, 1, stdin) == 1) {
        enum ggml_type t = (enum ggml_type) hdr[0];
        int64_t n = hdr[1];
        size_t size = ggml_row_size(t, n);
        void *in = malloc(size);
        float *out = malloc(sizeof(float) * n);
        if (fread(in, 1, size, stdin) != size) { fprintf(stderr, "short input\n"); return 1; }
        const struct ggml_type_traits *tr = ggml_get_type_traits(t);
        if (tr->to_float == NULL) { fprintf(stderr, "type %u has no to_float\n", hdr[0]); return 1; }
        tr->to_float(in, out, n);
        fwrite(out, sizeof(float), n, stdout);
        free(in); free(out);
    }
    return 0;
}

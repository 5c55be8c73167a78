package gguf

import "strconv"

// FileTypeKey is the key that says which quantisation scheme made the file (llama.cpp's llama_ftype):
// the type most of the tensors have, as llama-quantize was asked for it.
const FileTypeKey = "general.file_type"

// FileTypeGuessed is the bit llama.cpp sets in a file type it guessed from the tensors rather than
// read from the file (LLAMA_FTYPE_GUESSED).
const FileTypeGuessed = 1024

// fileTypes are llama.cpp's file types (enum llama_ftype) by number, named as llama-quantize and
// file names spell them; "" where the number was never used. 4 to 6 and 33 to 35 are types llama.cpp
// has removed.
var fileTypes = [...]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 4: "Q4_1_SOME_F16", 5: "Q4_2", 6: "Q4_3", 7: "Q8_0",
	8: "Q5_0", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S",
	15: "Q4_K_M", 16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M", 28: "IQ2_S",
	29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 33: "Q4_0_4_4", 34: "Q4_0_4_8", 35: "Q4_0_8_8",
	36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE", 39: "NVFP4", 40: "Q1_0", 41: "Q2_0",
}

// FileTypeName names a general.file_type value as llama-quantize and file names spell it (15 is
// "Q4_K_M", 1 is "F16"; with the FileTypeGuessed bit, the name followed by " (guessed)"). ok is false
// for a number llama.cpp does not name; the name is then "file type N".
func FileTypeName(n uint64) (name string, ok bool) {
	if n&FileTypeGuessed != 0 && n != FileTypeGuessed {
		if base, ok := FileTypeName(n &^ FileTypeGuessed); ok {
			return base + " (guessed)", true
		}
	}
	if n < uint64(len(fileTypes)) && fileTypes[n] != "" {
		return fileTypes[n], true
	}
	return "file type " + strconv.FormatUint(n, 10), false
}

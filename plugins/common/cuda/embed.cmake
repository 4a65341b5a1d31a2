# embed.cmake: writes the C file defining `const char NAME[]` with the bytes
# of INPUT (NUL-terminated), for cmake -P -DINPUT=... -DOUTPUT=... -DNAME=...
# (cuda_gemm embeds kernels.cu, compiled at run time by NVRTC).
file(READ "${INPUT}" _hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" _bytes "${_bytes}")
file(WRITE "${OUTPUT}.tmp" "/* generated from ${INPUT} by embed.cmake: do not edit */\n"
     "__attribute__((visibility(\"hidden\"))) extern const char ${NAME}[];\n"
     "const char ${NAME}[] = {\n${_bytes}0x00};\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")

# Writes the C source of a file's bytes: cmake -DIN=FILE -DOUT=FILE.c -DNAME=SYMBOL -P embed.cmake
# defines `const unsigned char NAME[]` and `const unsigned long NAME_size`
# (0 and an empty array when IN does not exist). Written to a temporary
# name and renamed, so that an interrupted build leaves no half file.
if(EXISTS "${IN}")
  file(READ "${IN}" hex HEX)
  string(LENGTH "${hex}" n)
  math(EXPR size "${n} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
else()
  set(body "0")
  set(size 0)
endif()
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by cmake/embed.cmake */\nconst unsigned char ${NAME}[] = {${body}};\nconst unsigned long ${NAME}_size = ${size};\n")
file(RENAME "${OUT}.tmp" "${OUT}")

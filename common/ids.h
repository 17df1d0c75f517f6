// Random identifiers: object UIDs (RFC 4122 v4) and generateName suffixes.
#pragma once

#include <string>

namespace shepherd::ids {

std::string uuid4();
// n characters from upstream's generateName alphabet (consonants and digits, no vowels,
// so suffixes never spell words).
std::string randomSuffix(int n = 5);

}  // namespace shepherd::ids

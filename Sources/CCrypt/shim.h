// libxcrypt's crypt_r: bcrypt ($2a$, $2b$, $2y$) and the other hashes of crypt(5), for the
// agent's basic auth users (the exporter-toolkit web configuration keeps bcrypt hashes).
#include <crypt.h>

package users

import (
	"bytes"
	"encoding/base64"
	"errors"
	"unicode/utf8"
)

// maxCredentials bounds the base64 part of a Basic header: a name and a
// 72-byte bcrypt password fit many times over.
const maxCredentials = 1024

// maxPassword is bcrypt's limit: longer passwords cannot match.
const maxPassword = 72

var errMalformed = errors.New("malformed Basic credentials")

// ParseBasic decodes the credentials of an "Authorization: Basic …"
// header (the part after the scheme, base64 of NAME:PASSWORD per RFC
// 7617, UTF-8). The password may hold colons; the name may not.
func ParseBasic(cred []byte) (name, password string, err error) {
	cred = bytes.TrimSpace(cred)
	if len(cred) == 0 || len(cred) > maxCredentials {
		return "", "", errMalformed
	}
	buf := make([]byte, base64.StdEncoding.DecodedLen(len(cred)))
	n, err := base64.StdEncoding.Decode(buf, cred)
	if err != nil {
		return "", "", errMalformed
	}
	buf = buf[:n]
	i := bytes.IndexByte(buf, ':')
	if i <= 0 || !utf8.Valid(buf) {
		return "", "", errMalformed
	}
	for _, c := range buf {
		if c < 0x20 || c == 0x7f {
			return "", "", errMalformed
		}
	}
	return string(buf[:i]), string(buf[i+1:]), nil
}

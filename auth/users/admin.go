package users

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"golang.org/x/crypto/bcrypt"

	"shoal/internal/atomicfile"
)

// Read returns the users of the file at path (none if it does not exist).
func Read(path string) ([]User, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return list, nil
}

// Add sets user name's password and groups in the file at path, creating
// the file (0600) if needed; an existing user is replaced. cost is the
// bcrypt cost (0: bcrypt.DefaultCost). It reports whether the user is new.
func Add(path, name, password string, groups []string, cost int) (bool, error) {
	if err := ValidName(name); err != nil {
		return false, err
	}
	for _, g := range groups {
		if err := ValidGroup(g); err != nil {
			return false, err
		}
	}
	if password == "" {
		return false, errors.New("empty password")
	}
	if len(password) > maxPassword {
		return false, fmt.Errorf("password longer than %d bytes (bcrypt's limit)", maxPassword)
	}
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(password), cost)
	if err != nil {
		return false, err
	}
	list, err := Read(path)
	if err != nil {
		return false, err
	}
	u := User{Name: name, Hash: string(hash), Groups: groups}
	i := slices.IndexFunc(list, func(x User) bool { return x.Name == name })
	if i >= 0 {
		list[i] = u
	} else {
		list = append(list, u)
	}
	return i < 0, write(path, list)
}

// Delete removes user name from the file at path.
func Delete(path, name string) error {
	list, err := Read(path)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(x User) bool { return x.Name == name })
	if i < 0 {
		return fmt.Errorf("no user %q in %s", name, path)
	}
	return write(path, slices.Delete(list, i, i+1))
}

// write replaces the file through a temporary file and a rename (md's
// reload sees the old file or the new, never half of one), 0600.
func write(path string, list []User) error {
	return atomicfile.Write(path, Format(list), 0o600)
}

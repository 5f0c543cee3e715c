package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"shoal/auth/users"
	"shoal/cmd/shoal/config"
)

// newUserCommand is `shoal admin user add|del|list`: edits of the local
// users file (HTTP Basic) md rereads when it changes. It works on the file
// directly, not through md.
func newUserCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user add|del|list --users-file F",
		Short: "manage the local users file (HTTP Basic users and their groups)",
	}
	config.Flag(cmd.PersistentFlags(), "users-file", "auth.users_file", "users file to edit (NAME:BCRYPT-HASH[:GROUP,...] per line)")
	add := &cobra.Command{
		Use:   "add NAME [--groups G1,G2]",
		Short: "add a user, or set an existing user's password and groups; the password is read from stdin (asked twice, unechoed, on a terminal)",
		Args:  cobra.ExactArgs(1),
		RunE:  runUserAdd,
	}
	add.Flags().StringSlice("groups", nil, "groups of the user, for group:NAME rules")
	add.Flags().Int("cost", 0, "bcrypt cost (0: the library default, 10)")
	cmd.AddCommand(add,
		&cobra.Command{
			Use:   "del NAME",
			Short: "remove a user",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				file, err := usersFile(cmd)
				if err != nil {
					return err
				}
				if err := users.Delete(file, args[0]); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "deleted user %s from %s\n", args[0], file)
				return nil
			},
		},
		&cobra.Command{
			Use:   "list",
			Short: "list users and their groups (never hashes)",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				file, err := usersFile(cmd)
				if err != nil {
					return err
				}
				list, err := users.Read(file)
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "USER\tGROUPS")
				for _, u := range list {
					fmt.Fprintf(tw, "%s\t%s\n", u.Name, strings.Join(u.Groups, ","))
				}
				return tw.Flush()
			},
		},
	)
	return cmd
}

// usersFile is the file to edit: --users-file, else auth.users_file of
// the config (file or SHOAL_AUTH_USERS_FILE), so the command edits the
// file md reads.
func usersFile(cmd *cobra.Command) (string, error) {
	c, err := config.Load(cmd.Flags())
	if err != nil {
		return "", err
	}
	if c.Auth.UsersFile == "" {
		return "", errors.New("no users file: give --users-file F or set auth.users_file")
	}
	return c.Auth.UsersFile, nil
}

func runUserAdd(cmd *cobra.Command, args []string) error {
	file, err := usersFile(cmd)
	if err != nil {
		return err
	}
	groups, _ := cmd.Flags().GetStringSlice("groups")
	cost, _ := cmd.Flags().GetInt("cost")
	if err := users.ValidName(args[0]); err != nil {
		return err
	}
	password, err := readPassword(cmd.InOrStdin(), cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	isNew, err := users.Add(file, args[0], password, groups, cost)
	if err != nil {
		return err
	}
	verb := "updated"
	if isNew {
		verb = "added"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s user %s in %s\n", verb, args[0], file)
	return nil
}

// readPassword reads the password: from a terminal, asked twice without
// echo; otherwise the first line of in (echo pw | shoal admin user add).
func readPassword(in io.Reader, prompt io.Writer) (string, error) {
	if f, ok := in.(*os.File); ok {
		if old, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			noEcho := *old
			noEcho.Lflag &^= unix.ECHO
			if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, &noEcho); err == nil {
				defer func() { _ = unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, old); fmt.Fprintln(prompt) }()
			}
			r := bufio.NewReader(f)
			fmt.Fprint(prompt, "password: ")
			p1, err := readLine(r)
			if err != nil {
				return "", err
			}
			fmt.Fprint(prompt, "\nagain: ")
			p2, err := readLine(r)
			if err != nil {
				return "", err
			}
			if p1 != p2 {
				return "", errors.New("the passwords differ")
			}
			return p1, nil
		}
	}
	return readLine(bufio.NewReader(in))
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil && (err != io.EOF || line == "") {
		return "", fmt.Errorf("reading the password: %w", err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
